package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/auth"
	"mentormemory/handlers"
	"mentormemory/mentor"
)

// loggedServer runs the HTTP app with verifier, writing its log as JSON
// lines into the returned buffer. No route it is asked reaches the store.
func loggedServer(t *testing.T, verifier handlers.TokenVerifier) (string, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	srv := httptest.NewServer(handlers.NewServer(handlers.Deps{Verifier: verifier, Log: log}))
	t.Cleanup(srv.Close)
	return srv.URL, &logs
}

// logLines decodes the log's lines whose msg is msg.
func logLines(t *testing.T, logs *bytes.Buffer, msg string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, raw := range bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n")) {
		var line map[string]any
		if err := json.Unmarshal(raw, &line); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		if line["msg"] == msg {
			lines = append(lines, line)
		}
	}
	return lines
}

func getWithToken(t *testing.T, url, token string) (apptest.Response, string) {
	t.Helper()
	res := apptest.Client{}.Do(t, apptest.Request{Method: http.MethodGet, Path: url, Token: token})
	if res.Status == 0 {
		t.Fatal(res.Err)
	}
	return res, string(res.Raw)
}

// A refused request's log line carries why it was refused, which the
// client never sees.
func TestRefusedRequestsAreLoggedWithTheirHiddenCause(t *testing.T) {
	const secret = "logging-test-secret-at-least-32-characters"
	verifier, err := auth.NewVerifier(context.Background(), auth.Config{JWTSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(verifier.Close)
	url, logs := loggedServer(t, verifier)
	// A token signed with another secret: the client hears only that its
	// authentication is invalid.
	forged, err := auth.MintHS256(strings.Repeat("x", 40), "0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11", "", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := getWithToken(t, url+"/api/conversation-memory", forged)
	if resp.Status != http.StatusUnauthorized || strings.Contains(body, "signature") {
		t.Fatalf("status %d, body %s: want a 401 that does not say why", resp.Status, body)
	}
	lines := logLines(t, logs, "request")
	if len(lines) != 1 {
		t.Fatalf("want one request line, got %v", lines)
	}
	line := lines[0]
	if line["level"] != "WARN" || line["status"] != float64(http.StatusUnauthorized) ||
		!strings.Contains(line["err"].(string), "signature") || line["request_id"] == "" {
		t.Fatalf("the refused request's line must be a warning with the hidden cause and the request id: %v", line)
	}
}

type panickingVerifier struct{}

func (panickingVerifier) Verify(string) (mentor.Caller, error) { panic("verifier broke") }

// A panic answers a 500 that shows no internals, and goes to the log with
// its stack and the request's line.
func TestPanicsAreLoggedAndAnswered(t *testing.T) {
	url, logs := loggedServer(t, panickingVerifier{})
	resp, body := getWithToken(t, url+"/api/conversation-memory", "any")
	if resp.Status != http.StatusInternalServerError || strings.Contains(body, "verifier broke") ||
		!strings.Contains(body, `"success":false`) {
		t.Fatalf("status %d, body %s", resp.Status, body)
	}
	panics := logLines(t, logs, "panic")
	if len(panics) != 1 || !strings.Contains(panics[0]["err"].(string), "verifier broke") ||
		!strings.Contains(panics[0]["stack"].(string), "panickingVerifier") {
		t.Fatalf("want the panic logged with its stack: %v", panics)
	}
	requests := logLines(t, logs, "request")
	if len(requests) != 1 || requests[0]["level"] != "ERROR" || requests[0]["status"] != float64(http.StatusInternalServerError) ||
		requests[0]["request_id"] != panics[0]["request_id"] {
		t.Fatalf("want one error line for the request, with the panic's request id: %v", requests)
	}
}
