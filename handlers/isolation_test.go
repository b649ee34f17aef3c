package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/llm/llmtest"
)

// TestEveryRouteIsolatesFacilitators has facilitator B, holding facilitator
// A's ids (learner, memory, archive), call every route and tool that takes
// them, the tools through the API and over MCP. Each answers as if the id
// did not exist and leaves A's data as it was, and B's searches find
// nothing of A's.
func TestEveryRouteIsolatesFacilitators(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Hello.", "stop"))
	svc, a, emma := apptest.StartWithLearner(t, apptest.Options{ModelURL: model.URL}, "Emma")
	b := svc.NewUser(t)
	svc.PostTurns(t, a, emma, apptest.Exchange("Emma's secret: she is scared of thunderstorms.", "Next time we'll plan a calm-down corner.")...).WantStatus(http.StatusOK)
	svc.PostTurns(t, a, "", apptest.Exchange("Our family's secret plan for the summer holidays.", "Sounds lovely.")...).WantStatus(http.StatusOK)
	// Cleared, the general conversation is an archive of A's.
	svc.Call(t, a.Token, http.MethodDelete, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	archiveID := apptest.Scalar[string](t, svc.Pool, `select id::text from public.conversation_history_archive where facilitator_id = $1::uuid`, a.ID)
	memoryID := svc.AddMemory(t, a, emma, map[string]any{"type": "personal", "content": "Emma is scared of thunderstorms",
		"metadata": map[string]any{"emotion": "anxious"}})
	svc.EndSession(t, a, emma)
	svc.PostTurns(t, a, emma, apptest.Exchange("Another secret about Emma's thunderstorms.", "Noted.")...).WantStatus(http.StatusOK)
	// A change the mentor proposed to A, waiting for A's confirmation.
	proposed := svc.Call(t, a.Token, http.MethodPost, "/api/tools/call", map[string]any{"name": "forget_memory",
		"arguments": `{"memory_id":"` + memoryID + `"}`}).WantStatus(http.StatusOK)
	actionID := proposed.Object("pending_action")["id"].(string)
	svc.Call(t, a.Token, http.MethodPut, "/api/learners/"+emma+"/settings", map[string]any{"learning": true}).WantStatus(http.StatusOK)
	svc.Call(t, a.Token, http.MethodPut, "/api/account/settings", map[string]any{"retention_days": 365}).WantStatus(http.StatusOK)
	before := snapshotOf(t, svc, a.ID)
	unchanged := func(t *testing.T, _ apptest.Response) {
		if after := snapshotOf(t, svc, a.ID); after != before {
			t.Fatalf("A's data changed:\nbefore %s\nafter  %s", before, after)
		}
	}

	// Every tool that takes A's ids, called by B through the API and over
	// MCP.
	toolCalls := []struct{ name, arguments, wantError string }{
		{"get_conversation_memory", `{"learner_id":"` + emma + `"}`, "Learner not found"},
		{"recall_learner_memories", `{"learner_id":"` + emma + `","about":"storms","type":null,"emotion":null}`, "Learner not found"},
		{"list_learner_memories", `{"learner_id":"` + emma + `"}`, "Learner not found"},
		{"forget_memory", `{"memory_id":"` + memoryID + `"}`, "Memory not found"},
		{"forget_topic", `{"learner_id":"` + emma + `","topic":"thunderstorms"}`, "Learner not found"},
		{"correct_memory", `{"memory_id":"` + memoryID + `","content":"Changed by B"}`, "Memory not found"},
		{"flag_memory", `{"memory_id":"` + memoryID + `"}`, "Memory not found"},
	}
	scenarios := []apptest.Scenario{
		{Method: http.MethodGet, Path: "/api/conversation-memory?learner_id=" + emma, WantError: "Learner not found"},
		{Method: http.MethodPost, Path: "/api/conversation-memory", Body: apptest.ConversationBody(emma, apptest.Exchange("hi", "hello")), WantError: "Learner not found"},
		{Method: http.MethodDelete, Path: "/api/conversation-memory?learner_id=" + emma, WantError: "Learner not found"},
		{Method: http.MethodGet, Path: "/api/conversation-memory?search=thunderstorms&include_archive=true&learner_id=" + emma, WantError: "Learner not found"},
		{Method: http.MethodGet, Path: "/api/archives/" + archiveID, WantError: "Archived conversation not found"},
		{Method: http.MethodGet, Path: "/api/memories?learner_id=" + emma, WantError: "Learner not found"},
		{Method: http.MethodPost, Path: "/api/memories", Body: map[string]any{"learner_id": emma, "type": "personal", "content": "Planted by B"}, WantError: "Learner not found"},
		{Method: http.MethodPatch, Path: "/api/memories/" + memoryID, Body: map[string]any{"content": "Changed by B"}, WantError: "Memory not found"},
		{Method: http.MethodDelete, Path: "/api/memories/" + memoryID, WantError: "Memory not found"},
		{Method: http.MethodGet, Path: "/api/memories/" + memoryID + "/sources", WantError: "Memory not found"},
		{Method: http.MethodGet, Path: "/api/memories/" + memoryID + "/history", WantError: "Memory not found"},
		{Method: http.MethodDelete, Path: "/api/memories?learner_id=" + emma, WantError: "Learner not found"},
		{Method: http.MethodDelete, Path: "/api/memories?learner_id=" + emma + "&type=personal&before=2100-01-01", WantError: "Learner not found"},
		{Method: http.MethodGet, Path: "/api/learners/" + emma + "/learning", WantError: "Learner not found"},
		{Method: http.MethodGet, Path: "/api/learners/" + emma + "/settings", WantError: "Learner not found"},
		{Method: http.MethodPut, Path: "/api/learners/" + emma + "/settings", Body: map[string]any{"learning": false}, WantError: "Learner not found"},
		{Method: http.MethodGet, Path: "/api/memories/context?learner_id=" + emma + "&message=thunderstorms", WantError: "Learner not found"},
		{Method: http.MethodPost, Path: "/api/sessions/end", Body: map[string]any{"learner_id": emma}, WantError: "Learner not found"},
		{Method: http.MethodGet, Path: "/api/opening-context?learner_id=" + emma, WantError: "Learner not found"},
		{Method: http.MethodPatch, Path: "/api/learners/" + emma, Body: map[string]any{"name": "Renamed by B"}, WantError: "Learner not found"},
		{Method: http.MethodDelete, Path: "/api/learners/" + emma, WantError: "Learner not found"},
		{Method: http.MethodGet, Path: "/api/export?learner_id=" + emma, WantError: "Learner not found"},
		{Method: http.MethodPost, Path: "/api/counselor", Body: map[string]any{"message": "Tell me about Emma", "learner_id": emma}, WantError: "Learner not found"},
		{Method: http.MethodPost, Path: "/api/actions/" + actionID + "/confirm", WantError: "Action not found"},
		{Method: http.MethodPost, Path: "/api/actions/" + actionID + "/cancel", WantError: "Action not found"},
	}
	for _, call := range toolCalls {
		scenarios = append(scenarios, apptest.Scenario{Name: "POST /api/tools/call " + call.name, Method: http.MethodPost,
			Path: "/api/tools/call", Body: map[string]any{"name": call.name, "arguments": call.arguments}, WantError: call.wantError})
	}
	for _, sc := range scenarios {
		sc.Token, sc.WantStatus, sc.Check = b.Token, http.StatusNotFound, unchanged
		sc.Run(t, svc)
	}
	overMCP := svc.MCP(t, b.Token)
	for _, call := range toolCalls {
		t.Run("MCP "+call.name, func(t *testing.T) {
			wantToolError(t, apptest.CallMCP(t, overMCP, call.name, call.arguments), call.wantError)
			unchanged(t, apptest.Response{})
		})
	}

	// B's own settings are B's alone.
	svc.Call(t, b.Token, http.MethodPut, "/api/account/settings", map[string]any{"learning": false, "retention_days": 1}).WantStatus(http.StatusOK)
	unchanged(t, apptest.Response{})

	// B's own views hold nothing of A's.
	search := svc.Call(t, b.Token, http.MethodGet, "/api/conversation-memory?search=secret+thunderstorms&include_archive=true", nil).
		WantStatus(http.StatusOK)
	if search.Body["count"] != 0.0 {
		t.Errorf("B's search found A's conversations: %s", search.Raw)
	}
	for _, path := range []string{
		"/api/memories",
		"/api/learners",
		"/api/conversation-memory",
		"/api/opening-context",
		"/api/memories/context?message=thunderstorms",
		"/api/erasures",
		"/api/actions",
		"/api/account/settings",
	} {
		res := svc.Call(t, b.Token, http.MethodGet, path, nil).WantStatus(http.StatusOK)
		for _, leak := range []string{"secret", "thunderstorm", "Emma", emma, memoryID, actionID, archiveID} {
			if strings.Contains(strings.ToLower(string(res.Raw)), strings.ToLower(leak)) {
				t.Errorf("B's %s shows A's %q: %s", path, leak, res.Raw)
			}
		}
	}
	found := svc.Call(t, b.Token, http.MethodPost, "/api/tools/call", toolCall("search_conversation_history", `{"search":"secret thunderstorms","include_archive":true}`)).
		WantStatus(http.StatusOK)
	if found.Body["count"] != 0.0 {
		t.Errorf("B's tool search found A's conversations: %s", found.Raw)
	}
	if found := mcpResult(t, apptest.CallMCP(t, overMCP, "search_conversation_history", `{"search":"secret thunderstorms","include_archive":true}`)); found["count"] != 0.0 {
		t.Errorf("B's search over MCP found A's conversations: %v", found)
	}
	unchanged(t, found)

	// B erasing its own account takes nothing of A's with it.
	svc.Call(t, b.Token, http.MethodDelete, "/api/account", nil).WantStatus(http.StatusOK)
	unchanged(t, found)
	// B's import cannot point at A's learner: refused whole.
	forged := `{"type":"archive","format":"mentormemory-archive","version":1}
{"type":"memory","id":"` + memoryID + `","learner_id":"` + emma + `","memory_type":"personal","content":"Planted by B"}
{"type":"end","records":1}`
	apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodPost, Path: "/api/import", Token: b.Token, Body: forged,
		Header: http.Header{"Content-Type": {"application/x-ndjson"}}}).
		WantError(http.StatusBadRequest, "learner_id "+emma+" refers to a learner that is not in the archive above (line 2)")
	unchanged(t, found)
	// B's archive holds nothing of A's.
	archive, _ := exportArchive(t, svc, b, "")
	for _, leak := range []string{"secret", "thunderstorm", "Emma", emma, memoryID, a.ID} {
		if strings.Contains(strings.ToLower(string(archive)), strings.ToLower(leak)) {
			t.Errorf("B's export shows A's %q", leak)
		}
	}
}

// snapshotOf is every row a facilitator owns, table by table, as text.
func snapshotOf(t *testing.T, svc *apptest.Service, facilitatorID string) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"learners", "conversation_updates", "conversation_turns", "conversation_history_archive",
		"learner_memories", "mentor_sessions", "session_openings", "memory_jobs", "memory_history", "consolidation_runs",
		"learner_profiles", "search_vocabulary", "erasure_receipts", "pending_actions", "facilitator_settings", "learner_settings"} {
		rows := apptest.Scalar[string](t, svc.Pool, `select coalesce(string_agg(t::text, E'\n' order by t::text), '') from public.`+table+
			` t where facilitator_id = $1::uuid`, facilitatorID)
		b.WriteString(table + ":\n" + rows + "\n")
	}
	return b.String()
}
