package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/llm/llmtest"
	"mentormemory/tools"
)

// toolCall is the body of POST /api/tools/call: a call of the tool name with
// arguments, a JSON text or a value.
func toolCall(name string, arguments any) map[string]any {
	return map[string]any{"name": name, "arguments": arguments}
}

func TestToolDefinitionsAreStrict(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	res := svc.Call(t, u.Token, http.MethodGet, "/api/tools", nil).WantStatus(http.StatusOK)
	defs := res.Body["tools"].([]any)
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
	for _, name := range []string{"get_conversation_memory", "search_conversation_history", "recall_learner_memories",
		"list_learner_memories", "forget_memory", "forget_topic", "correct_memory", "flag_memory"} {
		if !names[name] {
			t.Errorf("missing tool %s", name)
		}
	}
	if len(names) != len(tools.Definitions()) {
		t.Fatalf("GET /api/tools lists %d tools, want %d: %s", len(names), len(tools.Definitions()), res.Raw)
	}
}

func TestToolCalls(t *testing.T) {
	svc, a, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	b := svc.NewUser(t)
	svc.PostTurns(t, a, emma, apptest.Exchange("Emma panics during timed multiplication quizzes.", "Practise untimed first, then add a gentle timer.")...).WantStatus(http.StatusOK)
	call := func(u apptest.User, name string, arguments any) apptest.Response {
		return svc.Call(t, u.Token, http.MethodPost, "/api/tools/call", toolCall(name, arguments))
	}

	got := call(a, "get_conversation_memory", `{"learner_id":"`+emma+`"}`).WantStatus(http.StatusOK)
	if got.Body["has_memory"] != true || number(got.Body["turn_count"]) != 2 || got.Body["last_updated"] == nil ||
		len(got.Body["recent_context"].([]any)) != 2 || !strings.Contains(got.Body["summary"].(string), "multiplication") {
		t.Fatalf("get_conversation_memory: %s", got.Raw)
	}
	empty := call(a, "get_conversation_memory", `{"learner_id":null}`).WantStatus(http.StatusOK)
	if empty.Body["has_memory"] != false || empty.Body["success"] != true {
		t.Fatalf("general memory should be empty: %s", empty.Raw)
	}
	// Arguments as an object are accepted too.
	found := call(a, "search_conversation_history", map[string]any{"search": "timed quizzes", "include_archive": nil}).WantStatus(http.StatusOK)
	if found.Body["count"] != 1.0 {
		t.Fatalf("search_conversation_history: %s", found.Raw)
	}
	result := found.Body["results"].([]any)[0].(map[string]any)
	if result["learner_context"] != "Learner-specific" || !strings.Contains(result["snippet"].(string), "**") ||
		len(result["matches"].([]any)) == 0 {
		t.Fatalf("search result for the model: %s", found.Raw)
	}

	svc.AddMemory(t, a, emma, map[string]any{"type": "preference", "content": "Timed quizzes make Emma panic; untimed practice first",
		"metadata": map[string]any{"emotion": "anxious"}})
	svc.AddMemory(t, a, emma, map[string]any{"type": "personal", "content": "Emma loves horses"})
	recalled := call(a, "recall_learner_memories", map[string]any{"learner_id": emma, "about": "quiz tomorrow", "type": "preference", "emotion": "anxious"}).
		WantStatus(http.StatusOK)
	prefs := recalled.Body["preferences"].([]any)
	if len(prefs) != 1 || prefs[0].(map[string]any)["fact"] != "Timed quizzes make Emma panic; untimed practice first" ||
		prefs[0].(map[string]any)["emotion"] != "anxious" || len(recalled.Body["personal"].([]any)) != 0 {
		t.Fatalf("recall_learner_memories: %s", recalled.Raw)
	}

	// B holds A's learner id and finds nothing of A's.
	call(b, "get_conversation_memory", `{"learner_id":"`+emma+`"}`).WantError(404, "Learner not found")
	call(b, "recall_learner_memories", `{"learner_id":"`+emma+`","about":"quiz","type":null,"emotion":null}`).WantError(404, "Learner not found")
	if n := call(b, "search_conversation_history", `{"search":"multiplication","include_archive":true}`).WantStatus(200).Body["count"]; n != 0.0 {
		t.Fatalf("B found A's conversation")
	}

	bad := []struct{ name, arguments, message string }{
		{"delete_everything", `{}`, `Unknown tool "delete_everything": available tools are get_conversation_memory, search_conversation_history, recall_learner_memories, list_learner_memories, forget_memory, forget_topic, correct_memory and flag_memory`},
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
		apptest.Scenario{Name: tc.name, Method: http.MethodPost, Path: "/api/tools/call", Token: a.Token, Body: toolCall(tc.name, tc.arguments),
			WantStatus: http.StatusBadRequest, WantError: tc.message}.Run(t, svc)
	}
}

func TestCounselorUsesMemoryAndTools(t *testing.T) {
	model := llmtest.NewScriptedChat(t, func(n int, _ llmtest.ChatRequest) http.HandlerFunc {
		if n == 1 {
			return llmtest.ReplyToolCall("search_conversation_history", `{"search":"read aloud","include_archive":true}`)
		}
		return llmtest.ReplyContent("Reading to the dog worked before; try it again tonight.", "stop")
	})
	svc, u, maxID := apptest.StartWithLearner(t, apptest.Options{ModelURL: model.URL}, "Max")
	svc.PostTurns(t, u, maxID, apptest.Exchange("Max refuses to read aloud since the class laughed.", "Let him read to the dog first; low stakes.")...).WantStatus(http.StatusOK)

	res := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{
		"message": "How do I get Max reading again?", "learner_id": maxID, "history": []any{},
	}).WantStatus(http.StatusOK)
	if res.Body["reply"] != "Reading to the dog worked before; try it again tonight." {
		t.Fatalf("reply: %s", res.Raw)
	}
	calls := res.Body["tool_calls"].([]any)
	if len(calls) != 1 || calls[0].(map[string]any)["name"] != "search_conversation_history" {
		t.Fatalf("tool calls: %s", res.Raw)
	}
	asked := model.Calls()
	system := asked[0].Body.Contents("system")[0]
	for _, want := range []string{"=== CONVERSATION MEMORY ===", "Previous Summary (2 turns):", "Last Update: ", "=== END CONVERSATION MEMORY ===", "read aloud"} {
		if !strings.Contains(system, want) {
			t.Fatalf("first-message system prompt lacks %q:\n%s", want, system)
		}
	}
	if len(asked[0].Body.Tools) != len(tools.Definitions()) {
		t.Fatalf("the model was not offered the tools")
	}
	toolResults := asked[1].Body.Contents("tool")
	if len(toolResults) != 1 || !strings.Contains(toolResults[0], "read to the dog") {
		t.Fatalf("the search result was not fed back to the model: %v", toolResults)
	}

	// Later in the session the memory block is not repeated.
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{
		"message": "Thanks!", "learner_id": maxID,
		"history": apptest.Exchange("How do I get Max reading again?", "Try the dog."),
	}).WantStatus(http.StatusOK)
	if last := model.Last(t).Contents("system")[0]; strings.Contains(last, "CONVERSATION MEMORY") {
		t.Fatalf("memory repeated after the first message")
	}
}

func TestCounselorUnknownToolIsReportedToTheModel(t *testing.T) {
	model := llmtest.NewScriptedChat(t, func(n int, _ llmtest.ChatRequest) http.HandlerFunc {
		if n == 1 {
			return llmtest.ReplyToolCall("launch_rockets", `{}`)
		}
		return llmtest.ReplyContent("Sorry, let me answer directly.", "stop")
	})
	svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL})
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi"}).WantStatus(http.StatusOK)
	results := model.Calls()[1].Body.Contents("tool")
	if len(results) != 1 || !strings.Contains(results[0], `Unknown tool \"launch_rockets\"`) {
		t.Fatalf("the model should read the error: %v", results)
	}
}

func TestCounselorToolLoopIsBounded(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyToolCall("get_conversation_memory", `{"learner_id":null}`))
	svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL, MaxToolRounds: 3})
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi"}).
		WantError(502, "The mentor model kept calling tools without answering")
	asked := model.Calls()
	if len(asked) != 4 {
		t.Fatalf("model called %d times, want 3 rounds of tools plus one final call", len(asked))
	}
	if choice := asked[3].Body.ToolChoice; choice != "none" {
		t.Fatalf("the final call should forbid tools: %v", choice)
	}
}

func TestCounselorModelErrorStoresNothing(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyError(http.StatusInternalServerError, "overloaded"))
	svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL})
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi there"}).
		WantError(502, "The mentor model failed; please try again")
	for _, table := range []string{"conversation_turns", "conversation_updates"} {
		if n := svc.Count(t, `select count(*) from `+table); n != 0 {
			t.Fatalf("%s has %d rows after a failed chat", table, n)
		}
	}
}

func TestCounselorWithoutModel(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi"}).
		WantError(503, "No mentor model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a compatible server) and restart")
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": " "}).WantError(400, "Message required")
	other := svc.NewUser(t)
	theirs := svc.NewLearner(t, other, "Theirs")
	model := llmtest.NewChat(t, llmtest.ReplyContent("hi", "stop"))
	withModel, v := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL})
	withModel.Call(t, v.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi", "learner_id": theirs}).
		WantError(404, "Learner not found")
}
