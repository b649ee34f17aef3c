// Package llmtest is an OpenAI-compatible server for tests, in the test
// process: the real openai-go client talks HTTP to it, and the test reads
// back what the client sent.
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Call is one request the server received, its body decoded as Req.
type Call[Req any] struct {
	Method, Path, Auth string
	Body               Req
	// Size is the body's length in bytes, as sent.
	Size int
	// Raw is the body as sent, for what the decoded Body leaves out.
	Raw string
}

// Server answers POST requests to one path (such as /chat/completions or
// /embeddings) and records every request it receives, whatever its route.
type Server[Req any] struct {
	URL   string
	mu    sync.Mutex
	calls []Call[Req]
}

// New starts a server whose POST path is answered by reply, given the
// request and its decoded body; any other route is a 404, so a client that
// calls the wrong one fails its test. The server closes when the test ends.
func New[Req any](t testing.TB, path string, reply func(w http.ResponseWriter, r *http.Request, body Req)) *Server[Req] {
	t.Helper()
	return start(t, path, func(w http.ResponseWriter, r *http.Request, _ int, body Req) { reply(w, r, body) })
}

// start is New with the request's number, from 1, given to reply too.
func start[Req any](t testing.TB, path string, reply func(w http.ResponseWriter, r *http.Request, n int, body Req)) *Server[Req] {
	t.Helper()
	s := &Server[Req]{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body Req
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body does not decode as %T: %v: %s", body, err, raw)
		}
		s.mu.Lock()
		s.calls = append(s.calls, Call[Req]{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body, Size: len(raw), Raw: string(raw)})
		n := len(s.calls)
		s.mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		reply(w, r, n, body)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Calls returns the requests received so far, in order.
func (s *Server[Req]) Calls() []Call[Req] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call[Req](nil), s.calls...)
}

// Last is the body of the latest request; the test fails when there was
// none.
func (s *Server[Req]) Last(t testing.TB) Req {
	t.Helper()
	calls := s.Calls()
	if len(calls) == 0 {
		t.Fatal("the server was never called")
	}
	return calls[len(calls)-1].Body
}

// WriteJSON answers with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ChatCompletion is a chat.completion answer whose one choice is message.
func ChatCompletion(message map[string]any, finishReason string) map[string]any {
	return map[string]any{
		"id":      "chatcmpl-test",
		"object":  "chat.completion",
		"created": 1700000000,
		"model":   "fake-model",
		"choices": []any{map[string]any{
			"index":         0,
			"message":       message,
			"finish_reason": finishReason,
			"logprobs":      nil,
		}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	}
}

// ChatRequest is the part of a chat completion request tests read.
type ChatRequest struct {
	Model          string         `json:"model"`
	Messages       []ChatMessage  `json:"messages"`
	ResponseFormat map[string]any `json:"response_format"`
	Tools          []any          `json:"tools"`
	ToolChoice     any            `json:"tool_choice"`
}

// ChatMessage is one message of a chat completion request.
type ChatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"tool_call_id"`
}

// First is the content of the first message with role, or "".
func (r ChatRequest) First(role string) string {
	for _, m := range r.Messages {
		if m.Role == role {
			return m.Content
		}
	}
	return ""
}

// Last is the content of the last message with role, or "".
func (r ChatRequest) Last(role string) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == role {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Contents are the contents of the messages with role, in order.
func (r ChatRequest) Contents(role string) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == role {
			out = append(out, m.Content)
		}
	}
	return out
}

// Prompt is every message's content, in order, one per line.
func (r ChatRequest) Prompt() string {
	parts := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}

// NewChat starts a server whose POST /chat/completions is answered by
// reply.
func NewChat(t testing.TB, reply http.HandlerFunc) *Server[ChatRequest] {
	return New(t, "/chat/completions", func(w http.ResponseWriter, r *http.Request, _ ChatRequest) { reply(w, r) })
}

// NewScriptedChat starts a chat server that answers its nth request (from
// 1) as script says, given the request: so a test can have the model call
// a tool first and answer next, or fail once and recover.
func NewScriptedChat(t testing.TB, script func(n int, req ChatRequest) http.HandlerFunc) *Server[ChatRequest] {
	return start(t, "/chat/completions", func(w http.ResponseWriter, r *http.Request, n int, req ChatRequest) {
		script(n, req)(w, r)
	})
}

// Reply answers a chat completion with message.
func Reply(message map[string]any, finishReason string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, ChatCompletion(message, finishReason))
	}
}

// ReplyContent answers a chat completion with an assistant message
// carrying content.
func ReplyContent(content, finishReason string) http.HandlerFunc {
	return Reply(map[string]any{"role": "assistant", "content": content, "refusal": nil}, finishReason)
}

// ReplyToolCall answers a chat completion with a call of one tool.
func ReplyToolCall(name, arguments string) http.HandlerFunc {
	return Reply(map[string]any{"role": "assistant", "content": nil, "refusal": nil, "tool_calls": []map[string]any{{
		"id": "call_1", "type": "function", "function": map[string]any{"name": name, "arguments": arguments},
	}}}, "tool_calls")
}

// ReplyError answers with an API error, as an overloaded or failing model
// does.
func ReplyError(status int, message string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, status, map[string]any{"error": map[string]any{"message": message}})
	}
}
