package apptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"mentormemory/mentor"
)

// Request is one call to the service's API.
type Request struct {
	Method string
	Path   string
	Token  string // sent as the bearer token, unless empty
	// Body is nil, a string or []byte sent as it is, or a value sent as
	// JSON.
	Body   any
	Header http.Header // sent besides Content-Type and Authorization
}

// Response is the service's answer to a Request.
type Response struct {
	Status int
	Header http.Header
	// ContentLength is the answer's Content-Length, -1 when it came
	// chunked.
	ContentLength int64
	Raw           []byte
	Body          map[string]any // Raw decoded; nil when Raw is empty
	// Err is set when no answer came (refused, reset, timed out) or when
	// it was not a JSON object, as every answer of the API is.
	Err error

	tb testing.TB
}

// Client calls a running service as the web client does.
type Client struct {
	URL  string       // the service's base URL
	HTTP *http.Client // nil for http.DefaultClient
}

// Do sends req and reads the answer. It does not fail the test when no
// answer comes: the Response's Err says so, for tests in which that may
// happen (a server killed on purpose) and for goroutines, which must not
// end the test. A request or answer that breaks the API's document
// (handlers/openapi.json) fails the test (see checkContract).
func (c Client) Do(tb testing.TB, req Request) Response {
	tb.Helper()
	r := Response{tb: tb}
	body := requestBody(tb, req.Body)
	httpReq, err := http.NewRequest(req.Method, c.URL+req.Path, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	for name, values := range req.Header {
		httpReq.Header[name] = values
	}
	if httpReq.Header.Get("Content-Type") == "" {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	if req.Token != "" {
		httpReq.Header.Set("Authorization", "Bearer "+req.Token)
	}
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(httpReq)
	if err != nil {
		r.Err = err
		return r
	}
	defer resp.Body.Close()
	r.Status, r.Header, r.ContentLength = resp.StatusCode, resp.Header, resp.ContentLength
	if r.Raw, r.Err = io.ReadAll(resp.Body); r.Err == nil && len(r.Raw) > 0 {
		if err := json.Unmarshal(r.Raw, &r.Body); err != nil {
			r.Err = fmt.Errorf("the answer is not a JSON object: %w", err)
		}
	}
	// Benchmarks time the server; the tests hold it to the document.
	if _, benchmark := tb.(*testing.B); !benchmark {
		if err := checkContract(httpReq, body, r); err != nil {
			// Not Fatal: calls run on goroutines too.
			tb.Errorf("%s %s breaks the API's document (handlers/openapi.json): %v", req.Method, req.Path, err)
		}
	}
	return r
}

// requestBody is body's bytes: a string or []byte as it is, nil as none,
// any other value as JSON.
func requestBody(tb testing.TB, body any) []byte {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return []byte(b)
	case []byte:
		return b
	default:
		encoded, err := json.Marshal(b)
		if err != nil {
			tb.Fatal(err)
		}
		return encoded
	}
}

func (r Response) String() string {
	if r.Err != nil && r.Status == 0 {
		return "no answer: " + r.Err.Error()
	}
	return fmt.Sprintf("%d %s", r.Status, bytes.TrimSpace(r.Raw))
}

// WantStatus fails the test unless the answer came with status.
func (r Response) WantStatus(status int) Response {
	r.tb.Helper()
	if r.Err != nil || r.Status != status {
		r.tb.Fatalf("answer %s (%v), want status %d", r, r.Err, status)
	}
	return r
}

// WantError fails the test unless the answer is the API's error, with
// status and message: {"success": false, "error": message}.
func (r Response) WantError(status int, message string) {
	r.tb.Helper()
	r.WantStatus(status)
	if r.Body["success"] != false || r.Body["error"] != message {
		r.tb.Fatalf("answer %s, want the error %q", r.Raw, message)
	}
}

// Object is the answer's field key, which must be a JSON object.
func (r Response) Object(key string) map[string]any {
	r.tb.Helper()
	v, ok := r.Body[key].(map[string]any)
	if !ok {
		r.tb.Fatalf("no object %q in %s", key, r.Raw)
	}
	return v
}

// Call sends a request with token (none when empty) to the service; body is
// as in Request. It fails the test when no answer comes.
func (s *Service) Call(tb testing.TB, token, method, path string, body any) Response {
	tb.Helper()
	r := Client{URL: s.URL}.Do(tb, Request{Method: method, Path: path, Token: token, Body: body})
	if r.Err != nil {
		// Not Fatal: calls run on goroutines too.
		tb.Errorf("%s %s: %v", method, path, r.Err)
	}
	return r
}

// NewLearner adds a learner of u's through the API and returns its id.
func (s *Service) NewLearner(tb testing.TB, u User, name string) string {
	tb.Helper()
	res := s.Call(tb, u.Token, http.MethodPost, "/api/learners", map[string]any{"name": name}).WantStatus(http.StatusCreated)
	return res.Object("learner")["id"].(string)
}

// AddMemory adds a memory of a learner of u's through the API, as a
// facilitator does, and returns its id; memory is the body of POST
// /api/memories but for the learner.
func (s *Service) AddMemory(tb testing.TB, u User, learnerID string, memory map[string]any) string {
	tb.Helper()
	memory["learner_id"] = learnerID
	res := s.Call(tb, u.Token, http.MethodPost, "/api/memories", memory).WantStatus(http.StatusCreated)
	return res.Object("memory")["id"].(string)
}

// EndSession ends u's live session about a learner, as the facilitator's
// "End session" does.
func (s *Service) EndSession(tb testing.TB, u User, learnerID string) {
	tb.Helper()
	s.Call(tb, u.Token, http.MethodPost, "/api/sessions/end", map[string]any{"learner_id": learnerID}).WantStatus(http.StatusOK)
}

// PostTurns posts turns to u's conversation about a learner, or to the
// general one when learnerID is "".
func (s *Service) PostTurns(tb testing.TB, u User, learnerID string, turns ...mentor.Turn) Response {
	tb.Helper()
	return s.Call(tb, u.Token, http.MethodPost, "/api/conversation-memory", ConversationBody(learnerID, turns))
}

// ConversationBody is the body of POST /api/conversation-memory: turns for
// the conversation about a learner, or the general one when learnerID is
// "".
func ConversationBody(learnerID string, turns []mentor.Turn) map[string]any {
	body := map[string]any{"conversation_turns": turns, "learner_id": nil}
	if learnerID != "" {
		body["learner_id"] = learnerID
	}
	return body
}

// Exchange is a facilitator's question and the mentor's answer, as turns.
func Exchange(question, answer string) []mentor.Turn {
	return []mentor.Turn{{Role: mentor.RoleUser, Content: question}, {Role: mentor.RoleAssistant, Content: answer}}
}
