package handlers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mentormemory/app/apptest"
)

// TestEveryRouteIsolatesFacilitators has facilitator B, holding facilitator
// A's ids (learner, memory), call every route and tool that takes them. Each
// answers as if the id did not exist, B's searches find nothing of A's, and
// A's data is the same afterwards.
func TestEveryRouteIsolatesFacilitators(t *testing.T) {
	model := &scriptedModel{respond: func(int, map[string]any) (int, any) { return 200, textReply("Hello.") }}
	srv := httptest.NewServer(model)
	defer srv.Close()
	e := newEnv(t, apptest.Options{ModelURL: srv.URL})
	a, b := e.newUser(), e.newUser()
	emma := e.newLearner(a, "Emma")
	e.post(a, emma, exchange("Emma's secret: she is scared of thunderstorms.", "Next time we'll plan a calm-down corner.")...).wantStatus(http.StatusOK)
	e.post(a, "", exchange("Our family's secret plan for the summer holidays.", "Sounds lovely.")...).wantStatus(http.StatusOK)
	memoryID := e.addMemory(a, emma, map[string]any{"type": "personal", "content": "Emma is scared of thunderstorms",
		"metadata": map[string]any{"emotion": "anxious"}})
	e.call(a.token, http.MethodPost, "/api/sessions/end", map[string]any{"learner_id": emma}).wantStatus(http.StatusOK)
	e.post(a, emma, exchange("Another secret about Emma's thunderstorms.", "Noted.")...).wantStatus(http.StatusOK)
	before := e.snapshotOf(a.id)

	tool := func(name, arguments string) any {
		return map[string]any{"name": name, "arguments": arguments}
	}
	notFound := []struct {
		method, path string
		body         any
		message      string
	}{
		{http.MethodGet, "/api/conversation-memory?learner_id=" + emma, nil, "Learner not found"},
		{http.MethodPost, "/api/conversation-memory", map[string]any{"learner_id": emma, "conversation_turns": exchange("hi", "hello")}, "Learner not found"},
		{http.MethodDelete, "/api/conversation-memory?learner_id=" + emma, nil, "Learner not found"},
		{http.MethodGet, "/api/conversation-memory?search=thunderstorms&include_archive=true&learner_id=" + emma, nil, "Learner not found"},
		{http.MethodGet, "/api/memories?learner_id=" + emma, nil, "Learner not found"},
		{http.MethodPost, "/api/memories", map[string]any{"learner_id": emma, "type": "personal", "content": "Planted by B"}, "Learner not found"},
		{http.MethodPatch, "/api/memories/" + memoryID, map[string]any{"content": "Changed by B"}, "Memory not found"},
		{http.MethodDelete, "/api/memories/" + memoryID, nil, "Memory not found"},
		{http.MethodGet, "/api/memories/context?learner_id=" + emma + "&message=thunderstorms", nil, "Learner not found"},
		{http.MethodPost, "/api/sessions/end", map[string]any{"learner_id": emma}, "Learner not found"},
		{http.MethodGet, "/api/opening-context?learner_id=" + emma, nil, "Learner not found"},
		{http.MethodPost, "/api/counselor", map[string]any{"message": "Tell me about Emma", "learner_id": emma}, "Learner not found"},
		{http.MethodPost, "/api/tools/call", tool("get_conversation_memory", `{"learner_id":"`+emma+`"}`), "Learner not found"},
		{http.MethodPost, "/api/tools/call", tool("recall_learner_memories", `{"learner_id":"`+emma+`","about":"storms","type":null,"emotion":null}`), "Learner not found"},
	}
	for _, c := range notFound {
		t.Run(c.method+" "+strings.SplitN(c.path, "?", 2)[0], func(t *testing.T) {
			e.call(b.token, c.method, c.path, c.body).wantError(http.StatusNotFound, c.message)
		})
	}

	// B's own views hold nothing of A's.
	search := e.call(b.token, http.MethodGet, "/api/conversation-memory?search=secret+thunderstorms&include_archive=true", nil).
		wantStatus(http.StatusOK)
	if search.body["count"] != 0.0 {
		t.Errorf("B's search found A's conversations: %s", search.raw)
	}
	for _, path := range []string{
		"/api/memories",
		"/api/learners",
		"/api/conversation-memory",
		"/api/opening-context",
		"/api/memories/context?message=thunderstorms",
	} {
		res := e.call(b.token, http.MethodGet, path, nil).wantStatus(http.StatusOK)
		for _, leak := range []string{"secret", "thunderstorm", "Emma", emma, memoryID} {
			if strings.Contains(strings.ToLower(string(res.raw)), strings.ToLower(leak)) {
				t.Errorf("B's %s shows A's %q: %s", path, leak, res.raw)
			}
		}
	}
	found := e.call(b.token, http.MethodPost, "/api/tools/call", tool("search_conversation_history", `{"search":"secret thunderstorms","include_archive":true}`)).
		wantStatus(http.StatusOK)
	if found.body["count"] != 0.0 {
		t.Errorf("B's tool search found A's conversations: %s", found.raw)
	}

	if after := e.snapshotOf(a.id); after != before {
		t.Fatalf("A's data changed:\nbefore %s\nafter  %s", before, after)
	}
}

// snapshotOf is every row a facilitator owns, table by table, as text.
func (e *env) snapshotOf(facilitatorID string) string {
	e.t.Helper()
	var b strings.Builder
	for _, table := range []string{"learners", "conversation_updates", "conversation_turns", "conversation_history_archive",
		"learner_memories", "mentor_sessions", "session_openings", "memory_jobs"} {
		var rows string
		if err := e.pool.QueryRow(context.Background(), `select coalesce(string_agg(t::text, E'\n' order by t::text), '') from public.`+table+
			` t where facilitator_id = $1::uuid`, facilitatorID).Scan(&rows); err != nil {
			e.t.Fatal(err)
		}
		b.WriteString(table + ":\n" + rows + "\n")
	}
	return b.String()
}
