package handlers_test

import (
	"net/http"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/config"
)

// corsRequest sends a request from a browser page at origin and returns the
// response's status and CORS headers.
func corsRequest(t *testing.T, e *env, method, path, origin string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestCORSAllowsOnlyTheConfiguredOrigins(t *testing.T) {
	const app = "https://app.example.com"
	e := newEnv(t, apptest.Options{Web: config.Web{CORSOrigins: []string{app}}})
	u := e.newUser()

	// A preflight from the Next.js app's origin is answered without a token
	// and names that origin, never a wildcard, and never allows credentials.
	preflight := map[string]string{
		"Access-Control-Request-Method":  http.MethodPost,
		"Access-Control-Request-Headers": "authorization, content-type",
	}
	resp := corsRequest(t, e, http.MethodOptions, "/api/conversation-memory", app, preflight)
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != app ||
		resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("preflight from %s: %d, headers %v", app, resp.StatusCode, resp.Header)
	}
	resp = corsRequest(t, e, http.MethodGet, "/api/conversation-memory", app, map[string]string{"Authorization": "Bearer " + u.token})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != app {
		t.Fatalf("GET from %s: %d, headers %v", app, resp.StatusCode, resp.Header)
	}

	// Any other origin gets no CORS header, so the browser keeps the answer
	// from that page.
	for _, method := range []string{http.MethodOptions, http.MethodGet} {
		resp = corsRequest(t, e, method, "/api/conversation-memory", "https://evil.example.com", preflight)
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Fatalf("%s from another origin allowed it: %q", method, got)
		}
	}
}

func TestNoCORSByDefault(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	u := e.newUser()
	resp := corsRequest(t, e, http.MethodGet, "/api/conversation-memory", "https://app.example.com",
		map[string]string{"Authorization": "Bearer " + u.token})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("without configured origins: %d, Access-Control-Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}
