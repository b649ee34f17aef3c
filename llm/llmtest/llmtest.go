// Package llmtest is an OpenAI-compatible server for tests, in the test
// process: the real openai-go client talks HTTP to it, and the test reads
// back what the client sent.
package llmtest

import (
	"bytes"
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
		// The reply may read the body again (Reply, to tell whether a
		// stream was asked for).
		r.Body = io.NopCloser(bytes.NewReader(raw))
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

// Reply answers a chat completion with message: as one JSON answer, or,
// when the request asks for a stream, as a stream of chunks whose text
// comes a word at a time, the way a model's server streams.
func Reply(message map[string]any, finishReason string) http.HandlerFunc {
	return ReplyCosting(20, message, finishReason)
}

// ReplyCosting is Reply saying the call cost tokens (10 of them the
// reply's).
func ReplyCosting(tokens int, message map[string]any, finishReason string) http.HandlerFunc {
	usage := map[string]any{"prompt_tokens": tokens - 10, "completion_tokens": 10, "total_tokens": tokens}
	return func(w http.ResponseWriter, r *http.Request) {
		var asked struct {
			Stream        bool `json:"stream"`
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &asked)
		if !asked.Stream {
			completion := ChatCompletion(message, finishReason)
			completion["usage"] = usage
			WriteJSON(w, http.StatusOK, completion)
			return
		}
		stream := StartStream(w)
		for _, part := range []string{"content", "refusal"} {
			text, _ := message[part].(string)
			for _, word := range Words(text) {
				stream.delta(map[string]any{"role": "assistant", part: word}, nil)
			}
		}
		if calls, ok := message["tool_calls"].([]map[string]any); ok {
			stream.ToolCalls(calls)
		}
		if !asked.StreamOptions.IncludeUsage {
			usage = nil
		}
		stream.Finish(finishReason, usage)
	}
}

// Words splits text into pieces that keep their spaces, so that joined
// they are text again: the deltas of a streamed reply.
func Words(text string) []string {
	var words []string
	for text != "" {
		end := strings.IndexByte(text[1:], ' ') + 1
		if end == 0 {
			end = len(text)
		}
		words = append(words, text[:end])
		text = text[end:]
	}
	return words
}

// ChatStream writes a streamed chat completion, one chunk at a time, each
// sent at once.
type ChatStream struct {
	w http.ResponseWriter
}

// StartStream answers with the headers of a stream.
func StartStream(w http.ResponseWriter) ChatStream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return ChatStream{w}
}

func (s ChatStream) chunk(choices []any, usage any) {
	encoded, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000, "model": "fake-model",
		"choices": choices, "usage": usage,
	})
	_, _ = io.WriteString(s.w, "data: "+string(encoded)+"\n\n")
	http.NewResponseController(s.w).Flush()
}

func (s ChatStream) delta(delta map[string]any, finishReason any) {
	s.chunk([]any{map[string]any{"index": 0, "delta": delta, "finish_reason": finishReason, "logprobs": nil}}, nil)
}

// Text sends a piece of the reply's text.
func (s ChatStream) Text(text string) {
	s.delta(map[string]any{"role": "assistant", "content": text}, nil)
}

// ToolCalls sends calls (each with id, type and function) whole, in one
// chunk.
func (s ChatStream) ToolCalls(calls []map[string]any) {
	indexed := make([]map[string]any, len(calls))
	for i, call := range calls {
		indexed[i] = map[string]any{"index": i}
		for key, value := range call {
			indexed[i][key] = value
		}
	}
	s.delta(map[string]any{"role": "assistant", "tool_calls": indexed}, nil)
}

// Finish ends the stream with finishReason, and with usage (nil: none
// reported).
func (s ChatStream) Finish(finishReason string, usage map[string]any) {
	s.delta(map[string]any{}, finishReason)
	if usage != nil {
		s.chunk([]any{}, usage)
	}
	_, _ = io.WriteString(s.w, "data: [DONE]\n\n")
	http.NewResponseController(s.w).Flush()
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
