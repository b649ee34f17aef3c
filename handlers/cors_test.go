package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/config"
)

// fromPage is header with the Origin a browser adds to a request from a
// page at origin.
func fromPage(origin string, header http.Header) http.Header {
	h := http.Header{"Origin": {origin}}
	for name, values := range header {
		h[name] = values
	}
	return h
}

// allowedFor checks that a page at origin may read the answer: it names
// that origin, never a wildcard, and never allows credentials.
func allowedFor(origin string) func(*testing.T, apptest.Response) {
	return func(t *testing.T, r apptest.Response) {
		if r.Header.Get("Access-Control-Allow-Origin") != origin || r.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("answer to %s: headers %v", origin, r.Header)
		}
	}
}

func TestCORSAllowsOnlyTheConfiguredOrigins(t *testing.T) {
	const app, evil = "https://app.example.com", "https://evil.example.com"
	svc, u := apptest.StartWithUser(t, apptest.Options{Web: config.Web{CORSOrigins: []string{app}}})
	preflight := http.Header{
		"Access-Control-Request-Method":  {http.MethodPost},
		"Access-Control-Request-Headers": {"authorization, content-type, memory-consistency-token"},
	}

	// A preflight from the Next.js app's origin is answered without a token.
	for _, sc := range []apptest.Scenario{
		{Name: "preflight from the app", Method: http.MethodOptions, Path: "/api/conversation-memory", Header: fromPage(app, preflight),
			WantStatus: http.StatusNoContent, Check: func(t *testing.T, r apptest.Response) {
				allowedFor(app)(t, r)
				// The consistency token may be sent, so that reads see the
				// app's writes whichever server instance answers.
				if allowed := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")); !strings.Contains(allowed, "memory-consistency-token") {
					t.Errorf("the preflight allows the headers %q, not Memory-Consistency-Token", allowed)
				}
			}},
		{Name: "GET from the app", Method: http.MethodGet, Path: "/api/conversation-memory", Token: u.Token, Header: fromPage(app, nil),
			WantStatus: http.StatusOK, Check: func(t *testing.T, r apptest.Response) {
				allowedFor(app)(t, r)
				// A page may read the token an answer carries.
				if exposed := r.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(exposed, "Memory-Consistency-Token") {
					t.Errorf("the answer exposes the headers %q, not Memory-Consistency-Token", exposed)
				}
			}},
	} {
		sc.Run(t, svc)
	}

	// Any other origin gets no CORS header, so the browser keeps the answer
	// from that page.
	for _, method := range []string{http.MethodOptions, http.MethodGet} {
		resp := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: method, Path: "/api/conversation-memory", Header: fromPage(evil, preflight)})
		if got := resp.Header.Get("Access-Control-Allow-Origin"); resp.Status == 0 || got != "" {
			t.Fatalf("%s from another origin: %s, Access-Control-Allow-Origin %q", method, resp, got)
		}
	}
}

func TestNoCORSByDefault(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	apptest.Scenario{Method: http.MethodGet, Path: "/api/conversation-memory", Token: u.Token, Header: fromPage("https://app.example.com", nil),
		WantStatus: http.StatusOK, Check: func(t *testing.T, r apptest.Response) {
			if got := r.Header.Get("Access-Control-Allow-Origin"); got != "" {
				t.Fatalf("without configured origins: Access-Control-Allow-Origin %q", got)
			}
		}}.Run(t, svc)
}
