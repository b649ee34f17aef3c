package handlers_test

import (
	"bufio"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"mentormemory/app"
	"mentormemory/app/apptest"
)

// Every answer of the API, errors included, is kept out of caches and from
// type sniffing; the web client's files keep their own caching.
func TestAnswersAreNotCachedOrSniffed(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	client := apptest.Client{URL: svc.URL}
	for _, req := range []apptest.Request{
		{Method: http.MethodGet, Path: "/api/learners", Token: u.Token},
		{Method: http.MethodGet, Path: "/api/conversation-memory"},
		{Method: http.MethodPost, Path: "/api/learners", Token: u.Token, Body: `{"name":`},
		{Method: http.MethodGet, Path: "/api/nothing-here"},
		{Method: http.MethodGet, Path: "/healthz"},
		{Method: http.MethodPost, Path: "/mcp", Token: u.Token, Header: mcpHeaders(), Body: mcpInitialize},
		{Method: http.MethodPost, Path: "/mcp", Header: mcpHeaders(), Body: mcpInitialize},
	} {
		r := client.Do(t, req)
		if r.Err != nil {
			t.Fatalf("%s %s: %v", req.Method, req.Path, r.Err)
		}
		if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s (%d): Cache-Control %q, X-Content-Type-Options %q; want no-store and nosniff",
				req.Method, req.Path, r.Status, r.Header.Get("Cache-Control"), r.Header.Get("X-Content-Type-Options"))
		}
	}
	resp, _ := fetch(t, http.MethodGet, svc.URL+"/app.js", nil)
	if resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("the web client's files are revalidated, not uncached: Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
}

// A client's request id is kept when it is short and plain; any other is
// replaced by one of the server's, so a forged id cannot fill the log or
// the answer's headers.
func TestOnlyPlainRequestIDsAreKept(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	client := apptest.Client{URL: svc.URL}
	serverMade := regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)
	for _, tc := range []struct {
		sent string
		kept bool
	}{
		{"next-7f3a9c", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{strings.Repeat("x", 16<<10), false},
		{"req id with spaces", false},
		{"<script>", false},
	} {
		r := client.Do(t, apptest.Request{Method: http.MethodGet, Path: "/healthz", Header: http.Header{"X-Request-Id": {tc.sent}}})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		got := r.Header.Get("X-Request-Id")
		switch {
		case tc.kept && got != tc.sent:
			t.Errorf("a plain id of %d characters became %q", len(tc.sent), got)
		case !tc.kept && (got == tc.sent || !serverMade.MatchString(got)):
			t.Errorf("an id of %d characters was answered as %.80q; want one the server made", len(tc.sent), got)
		}
	}
}

// Headers beyond what a Supabase token needs are refused with 431 before
// anything is read or held for them.
func TestOversizedHeadersAreRefused(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	client := apptest.Client{URL: svc.URL}
	// net/http reads 4 KiB past the limit before it refuses.
	size := app.MaxHeaderBytes + 8<<10
	big := client.Do(t, apptest.Request{Method: http.MethodGet, Path: "/healthz",
		Header: http.Header{"X-Padding": {strings.Repeat("a", size)}}})
	if big.Status != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a %d-byte header: status %d (%v), want 431", size, big.Status, big.Err)
	}
	u := svc.NewUser(t)
	svc.Call(t, u.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
}

// A request without a token that announces a large body and sends less is
// refused at once, not after the server has waited for the rest of it.
func TestUnauthenticatedLargeBodyIsRefusedAtOnce(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	conn := dialService(t, svc)
	if _, err := conn.Write([]byte("POST /api/conversation-memory HTTP/1.1\r\nHost: " + conn.RemoteAddr().String() +
		"\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{\"conversation_turns\": [")); err != nil {
		t.Fatal(err)
	}
	// Well inside the server's 30 s read timeout, which is what the answer
	// used to wait for.
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 401") {
		t.Fatalf("answer %q, %v; want a 401 without waiting for the announced body", status, err)
	}
}
