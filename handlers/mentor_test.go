package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/llm/llmtest"
)

// scriptedModel is an OpenAI-compatible server whose answers a test scripts
// per request, so the real openai-go client and tool loop run against it.
type scriptedModel struct {
	mu       sync.Mutex
	requests []map[string]any
	respond  func(n int, req map[string]any) (int, any)
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	m.mu.Lock()
	m.requests = append(m.requests, req)
	n := len(m.requests)
	m.mu.Unlock()
	status, reply := m.respond(n, req)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(reply)
}

func (m *scriptedModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

func (m *scriptedModel) request(i int) map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests[i]
}

// lastPrompt is the latest request the model got, as JSON text.
func (m *scriptedModel) lastPrompt(t *testing.T) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		t.Fatal("the model was never called")
	}
	text, err := json.Marshal(m.requests[len(m.requests)-1])
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func textReply(content string) map[string]any {
	return llmtest.ChatCompletion(map[string]any{"role": "assistant", "content": content}, "stop")
}

func toolCallReply(name, arguments string) map[string]any {
	return llmtest.ChatCompletion(map[string]any{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{
		"id": "call_1", "type": "function", "function": map[string]any{"name": name, "arguments": arguments},
	}}}, "stop")
}

// messageContents returns the contents of a request's messages of one role.
func messageContents(req map[string]any, role string) []string {
	var out []string
	for _, m := range req["messages"].([]any) {
		msg := m.(map[string]any)
		if msg["role"] == role {
			if s, ok := msg["content"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func TestToolDefinitionsAreStrict(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	u := e.newUser()
	res := e.call(u.token, http.MethodGet, "/api/tools", nil).wantStatus(http.StatusOK)
	defs := res.body["tools"].([]any)
	names := map[string]bool{}
	for _, d := range defs {
		fn := d.(map[string]any)["function"].(map[string]any)
		names[fn["name"].(string)] = true
		params := fn["parameters"].(map[string]any)
		required := map[string]bool{}
		for _, r := range params["required"].([]any) {
			required[r.(string)] = true
		}
		for prop := range params["properties"].(map[string]any) {
			if !required[prop] {
				t.Errorf("%s: property %s not in required", fn["name"], prop)
			}
		}
		if fn["strict"] != true || params["additionalProperties"] != false || d.(map[string]any)["type"] != "function" {
			t.Errorf("%s is not a strict function tool: %v", fn["name"], d)
		}
	}
	if !names["get_conversation_memory"] || !names["search_conversation_history"] || !names["recall_learner_memories"] {
		t.Fatalf("missing tools: %s", res.raw)
	}
}

func TestToolCalls(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	a, b := e.newUser(), e.newUser()
	emma := e.newLearner(a, "Emma")
	e.post(a, emma, exchange("Emma panics during timed multiplication quizzes.", "Practise untimed first, then add a gentle timer.")...).wantStatus(http.StatusOK)
	call := func(u user, name string, arguments any) response {
		return e.call(u.token, http.MethodPost, "/api/tools/call", map[string]any{"name": name, "arguments": arguments})
	}

	got := call(a, "get_conversation_memory", `{"learner_id":"`+emma+`"}`).wantStatus(http.StatusOK)
	if got.body["has_memory"] != true || number(got.body["turn_count"]) != 2 || got.body["last_updated"] == nil ||
		len(got.body["recent_context"].([]any)) != 2 || !strings.Contains(got.body["summary"].(string), "multiplication") {
		t.Fatalf("get_conversation_memory: %s", got.raw)
	}
	empty := call(a, "get_conversation_memory", `{"learner_id":null}`).wantStatus(http.StatusOK)
	if empty.body["has_memory"] != false || empty.body["success"] != true {
		t.Fatalf("general memory should be empty: %s", empty.raw)
	}
	// Arguments as an object are accepted too.
	found := call(a, "search_conversation_history", map[string]any{"search": "timed quizzes", "include_archive": nil}).wantStatus(http.StatusOK)
	if found.body["count"] != 1.0 {
		t.Fatalf("search_conversation_history: %s", found.raw)
	}
	result := found.body["results"].([]any)[0].(map[string]any)
	if result["learner_context"] != "Learner-specific" || !strings.Contains(result["snippet"].(string), "**") ||
		len(result["matches"].([]any)) == 0 {
		t.Fatalf("search result for the model: %s", found.raw)
	}

	e.addMemory(a, emma, map[string]any{"type": "preference", "content": "Timed quizzes make Emma panic; untimed practice first",
		"metadata": map[string]any{"emotion": "anxious"}})
	e.addMemory(a, emma, map[string]any{"type": "personal", "content": "Emma loves horses"})
	recalled := call(a, "recall_learner_memories", map[string]any{"learner_id": emma, "about": "quiz tomorrow", "type": "preference", "emotion": "anxious"}).
		wantStatus(http.StatusOK)
	prefs := recalled.body["preferences"].([]any)
	if len(prefs) != 1 || prefs[0].(map[string]any)["fact"] != "Timed quizzes make Emma panic; untimed practice first" ||
		prefs[0].(map[string]any)["emotion"] != "anxious" || len(recalled.body["personal"].([]any)) != 0 {
		t.Fatalf("recall_learner_memories: %s", recalled.raw)
	}

	// B holds A's learner id and finds nothing of A's.
	call(b, "get_conversation_memory", `{"learner_id":"`+emma+`"}`).wantError(404, "Learner not found")
	call(b, "recall_learner_memories", `{"learner_id":"`+emma+`","about":"quiz","type":null,"emotion":null}`).wantError(404, "Learner not found")
	if n := call(b, "search_conversation_history", `{"search":"multiplication","include_archive":true}`).wantStatus(200).body["count"]; n != 0.0 {
		t.Fatalf("B found A's conversation")
	}

	bad := []struct{ name, arguments, message string }{
		{"delete_everything", `{}`, `Unknown tool "delete_everything": available tools are get_conversation_memory, search_conversation_history and recall_learner_memories`},
		{"search_conversation_history", `{"search": "x"`, "Tool arguments must be a JSON object"},
		{"search_conversation_history", `[1]`, "Tool arguments must be a JSON object"},
		{"search_conversation_history", `{"search":"x"}`, `Missing argument "include_archive" (use null when it does not apply)`},
		{"search_conversation_history", `{"search":"x","include_archive":true,"limit":5}`, `Unknown argument "limit": expected search, include_archive`},
		{"search_conversation_history", `{"search":7,"include_archive":true}`, `Argument "search" has the wrong type: want string`},
		{"search_conversation_history", `{"search":"","include_archive":true}`, "Search text required"},
		{"get_conversation_memory", `{"learner_id":"emma"}`, "learner_id must be a uuid"},
		{"recall_learner_memories", `{"learner_id":null,"about":"x","type":"secret","emotion":null}`, "type must be one of academic, personal, preference, context"},
		{"recall_learner_memories", `{"learner_id":null,"about":"x","type":null}`, `Missing argument "emotion" (use null when it does not apply)`},
	}
	for _, tc := range bad {
		call(a, tc.name, tc.arguments).wantError(400, tc.message)
	}
}

func TestCounselorUsesMemoryAndTools(t *testing.T) {
	model := &scriptedModel{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	e := newEnv(t, apptest.Options{ModelURL: srv.URL})
	u := e.newUser()
	maxID := e.newLearner(u, "Max")
	e.post(u, maxID, exchange("Max refuses to read aloud since the class laughed.", "Let him read to the dog first; low stakes.")...).wantStatus(http.StatusOK)

	model.respond = func(n int, req map[string]any) (int, any) {
		if n == 1 {
			return 200, toolCallReply("search_conversation_history", `{"search":"read aloud","include_archive":true}`)
		}
		return 200, textReply("Reading to the dog worked before; try it again tonight.")
	}
	res := e.call(u.token, http.MethodPost, "/api/counselor", map[string]any{
		"message": "How do I get Max reading again?", "learner_id": maxID, "history": []any{},
	}).wantStatus(http.StatusOK)
	if res.body["reply"] != "Reading to the dog worked before; try it again tonight." {
		t.Fatalf("reply: %s", res.raw)
	}
	calls := res.body["tool_calls"].([]any)
	if len(calls) != 1 || calls[0].(map[string]any)["name"] != "search_conversation_history" {
		t.Fatalf("tool calls: %s", res.raw)
	}
	system := messageContents(model.request(0), "system")[0]
	for _, want := range []string{"=== CONVERSATION MEMORY ===", "Previous Summary (2 turns):", "Last Update: ", "=== END CONVERSATION MEMORY ===", "read aloud"} {
		if !strings.Contains(system, want) {
			t.Fatalf("first-message system prompt lacks %q:\n%s", want, system)
		}
	}
	if len(model.request(0)["tools"].([]any)) != 3 {
		t.Fatalf("the model was not offered the tools")
	}
	toolResults := messageContents(model.request(1), "tool")
	if len(toolResults) != 1 || !strings.Contains(toolResults[0], "read to the dog") {
		t.Fatalf("the search result was not fed back to the model: %v", toolResults)
	}

	// Later in the session the memory block is not repeated.
	res = e.call(u.token, http.MethodPost, "/api/counselor", map[string]any{
		"message": "Thanks!", "learner_id": maxID,
		"history": exchange("How do I get Max reading again?", "Try the dog."),
	}).wantStatus(http.StatusOK)
	if last := messageContents(model.request(model.count()-1), "system")[0]; strings.Contains(last, "CONVERSATION MEMORY") {
		t.Fatalf("memory repeated after the first message")
	}
}

func TestCounselorUnknownToolIsReportedToTheModel(t *testing.T) {
	model := &scriptedModel{respond: func(n int, req map[string]any) (int, any) {
		if n == 1 {
			return 200, toolCallReply("launch_rockets", `{}`)
		}
		return 200, textReply("Sorry, let me answer directly.")
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	e := newEnv(t, apptest.Options{ModelURL: srv.URL})
	u := e.newUser()
	e.call(u.token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi"}).wantStatus(http.StatusOK)
	results := messageContents(model.request(1), "tool")
	if len(results) != 1 || !strings.Contains(results[0], `Unknown tool \"launch_rockets\"`) {
		t.Fatalf("the model should read the error: %v", results)
	}
}

func TestCounselorToolLoopIsBounded(t *testing.T) {
	model := &scriptedModel{respond: func(n int, req map[string]any) (int, any) {
		return 200, toolCallReply("get_conversation_memory", `{"learner_id":null}`)
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	e := newEnv(t, apptest.Options{ModelURL: srv.URL, MaxToolRounds: 3})
	u := e.newUser()
	e.call(u.token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi"}).
		wantError(502, "The mentor model kept calling tools without answering")
	if model.count() != 4 {
		t.Fatalf("model called %d times, want 3 rounds of tools plus one final call", model.count())
	}
	if last := model.request(3); last["tool_choice"] != "none" {
		t.Fatalf("the final call should forbid tools: %v", last["tool_choice"])
	}
}

func TestCounselorModelErrorStoresNothing(t *testing.T) {
	model := &scriptedModel{respond: func(n int, req map[string]any) (int, any) {
		return 500, map[string]any{"error": map[string]any{"message": "overloaded"}}
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	e := newEnv(t, apptest.Options{ModelURL: srv.URL})
	u := e.newUser()
	e.call(u.token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi there"}).
		wantError(502, "The mentor model failed; please try again")
	for _, table := range []string{"conversation_turns", "conversation_updates"} {
		if n := e.count(`select count(*) from ` + table); n != 0 {
			t.Fatalf("%s has %d rows after a failed chat", table, n)
		}
	}
}

func TestCounselorWithoutModel(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	u := e.newUser()
	e.call(u.token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi"}).
		wantError(503, "No mentor model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a compatible server) and restart")
	e.call(u.token, http.MethodPost, "/api/counselor", map[string]any{"message": " "}).wantError(400, "Message required")
	other := e.newUser()
	theirs := e.newLearner(other, "Theirs")
	model := &scriptedModel{respond: func(int, map[string]any) (int, any) { return 200, textReply("hi") }}
	srv := httptest.NewServer(model)
	defer srv.Close()
	withModel := newEnv(t, apptest.Options{ModelURL: srv.URL})
	v := withModel.newUser()
	withModel.call(v.token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi", "learner_id": theirs}).
		wantError(404, "Learner not found")
}
