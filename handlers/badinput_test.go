package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mentormemory/app/apptest"
)

// nothingStoredFor checks, after a refused request, that no conversation
// is stored and u has no learner.
func nothingStoredFor(svc *apptest.Service, u apptest.User) func(*testing.T, apptest.Response) {
	return func(t *testing.T, _ apptest.Response) {
		t.Helper()
		for _, table := range []string{"conversation_turns", "conversation_updates", "conversation_history_archive"} {
			if n := svc.Count(t, `select count(*) from `+table); n != 0 {
				t.Errorf("%s has %d rows after refused requests", table, n)
			}
		}
		if n := svc.Count(t, `select count(*) from learners where facilitator_id = $1::uuid`, u.ID); n != 0 {
			t.Errorf("refused requests created %d learners", n)
		}
	}
}

func TestBadInputIsRefusedAndChangesNothing(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	other := svc.NewUser(t)
	othersLearner := svc.NewLearner(t, other, "Not yours")
	turn := `{"role":"user","content":"hello"}`
	manyTurns := "[" + strings.TrimSuffix(strings.Repeat(turn+",", 501), ",") + "]"

	cases := []struct {
		name, method, path string
		body               string
		status             int
		message            string
	}{
		{"malformed JSON", "POST", "/api/conversation-memory", `{"conversation_turns": [`, 400, "Malformed JSON"},
		{"empty body", "POST", "/api/conversation-memory", ``, 400, "Request body required (JSON)"},
		{"trailing data", "POST", "/api/conversation-memory", `{"conversation_turns":[` + turn + `]} {}`, 400, "Malformed JSON: unexpected data after the object"},
		{"missing turns", "POST", "/api/conversation-memory", `{"learner_id": null}`, 400, "Conversation turns required"},
		{"empty turns", "POST", "/api/conversation-memory", `{"conversation_turns": []}`, 400, "Conversation turns required"},
		{"turns not a list", "POST", "/api/conversation-memory", `{"conversation_turns": "hi"}`, 400, "Malformed JSON: conversation_turns has the wrong type"},
		{"bad learner uuid", "POST", "/api/conversation-memory", `{"learner_id":"emma","conversation_turns":[` + turn + `]}`, 400, "learner_id must be a uuid"},
		{"learner id a number", "POST", "/api/conversation-memory", `{"learner_id":7,"conversation_turns":[` + turn + `]}`, 400, "learner_id must be a uuid or null"},
		{"unknown role", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"system","content":"x"}]}`, 400, `Turn 1: role must be "user" or "assistant"`},
		{"empty content", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"  "}]}`, 400, "Turn 1: content required"},
		{"content not text", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":["a"]}]}`, 400, "Malformed JSON: conversation_turns.content has the wrong type"},
		{"NUL in content", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"a\u0000b"}]}`, 400, "Turn content must not contain NUL characters"},
		{"escape in content", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"a\u001b[2Jb"}]}`, 400, "Turn content must not contain control characters (tab and line breaks are fine)"},
		{"invalid UTF-8 body", "POST", "/api/conversation-memory", "{\"conversation_turns\":[{\"role\":\"user\",\"content\":\"a\xffb\"}]}", 400, "Request body must be valid UTF-8"},
		{"right-to-left override in a name", "POST", "/api/learners", `{"name":"Emma\u202e"}`, 400, "Learner name must not contain control characters (tab and line breaks are fine)"},
		{"too many turns", "POST", "/api/conversation-memory", `{"conversation_turns":` + manyTurns + `}`, 400, "Too many conversation turns: at most 500 per request"},
		{"turn too long", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"` + strings.Repeat("a", 20_001) + `"}]}`, 400, "Turn 1: content too long (at most 20000 characters)"},
		{"turn id an object", "POST", "/api/conversation-memory", `{"conversation_turns":[{"id":{},"role":"user","content":"x"}]}`, 400, "Turn id must be a string or a number"},
		{"turn time not a time", "POST", "/api/conversation-memory", `{"conversation_turns":[` + turn + `,{"role":"assistant","content":"y","created_at":"yesterday"}]}`, 400, "Turn 2: created_at must be an RFC 3339 time, such as 2023-12-04T18:30:00Z"},
		{"turn time a date alone", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"x","created_at":"2023-12-04"}]}`, 400, "Turn 1: created_at must be an RFC 3339 time, such as 2023-12-04T18:30:00Z"},
		{"turn time a number", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"x","created_at":1701714600}]}`, 400, "Malformed JSON: conversation_turns.created_at has the wrong type"},
		{"turn time before 1970", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"x","created_at":"1969-07-20T20:17:00Z"}]}`, 400, "Turn 1: created_at 1969-07-20T20:17:00Z is before 1970"},
		{"body too large", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"` + strings.Repeat("a", 3<<20) + `"}]}`, 413, "Request body too large (at most 2097152 bytes)"},
		{"someone else's learner", "POST", "/api/conversation-memory", `{"learner_id":"` + othersLearner + `","conversation_turns":[` + turn + `]}`, 404, "Learner not found"},
		{"get with bad uuid", "GET", "/api/conversation-memory?learner_id=x", ``, 400, "learner_id must be a uuid"},
		{"get someone else's learner", "GET", "/api/conversation-memory?learner_id=" + othersLearner, ``, 404, "Learner not found"},
		{"delete someone else's learner", "DELETE", "/api/conversation-memory?learner_id=" + othersLearner, ``, 404, "Learner not found"},
		{"empty search", "GET", "/api/conversation-memory?search=", ``, 400, "Search text required"},
		{"search too long", "GET", "/api/conversation-memory?search=" + strings.Repeat("a", 501), ``, 400, "Search text too long (at most 500 characters)"},
		{"search limit zero", "GET", "/api/conversation-memory?search=x&limit=0", ``, 400, "limit must be between 1 and 100"},
		{"search limit too big", "GET", "/api/conversation-memory?search=x&limit=101", ``, 400, "limit must be between 1 and 100"},
		{"search limit not a number", "GET", "/api/conversation-memory?search=x&limit=ten", ``, 400, "limit must be a whole number"},
		{"include_archive not a bool", "GET", "/api/conversation-memory?search=x&include_archive=maybe", ``, 400, "include_archive must be true or false"},
		{"search NUL", "GET", "/api/conversation-memory?search=a%00b", ``, 400, "Search text must not contain NUL characters"},
		{"search invalid UTF-8", "GET", "/api/conversation-memory?search=a%ffb", ``, 400, "Search text must be valid UTF-8"},
		{"archive id not a uuid", "GET", "/api/archives/x", ``, 400, "archive id must be a uuid"},
		{"archive page of none", "GET", "/api/archives/00000000-0000-0000-0000-000000000001?limit=0", ``, 400, "limit must be between 1 and 500"},
		{"archive offset negative", "GET", "/api/archives/00000000-0000-0000-0000-000000000001?offset=-1", ``, 400, "offset must be between 0 and 100000"},
		{"no such archive", "GET", "/api/archives/00000000-0000-0000-0000-000000000001", ``, 404, "Archived conversation not found"},
		{"learner without name", "POST", "/api/learners", `{"name":" "}`, 400, "Learner name required"},
		{"learner name too long", "POST", "/api/learners", `{"name":"` + strings.Repeat("n", 101) + `"}`, 400, "Learner name too long (at most 100 characters)"},
		{"unknown route", "GET", "/api/nothing-here", ``, 404, "Not found"},
		{"wrong method", "PUT", "/api/conversation-memory", ``, 405, "Method not allowed"},
	}
	for _, tc := range cases {
		apptest.Scenario{
			Name: tc.name, Method: tc.method, Path: tc.path, Token: u.Token, Body: tc.body,
			WantStatus: tc.status, WantError: tc.message, Check: nothingStoredFor(svc, u),
		}.Run(t, svc)
	}
}

func TestAuthentication(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	noTurnStored := func(t *testing.T, _ apptest.Response) {
		if n := svc.Count(t, `select count(*) from conversation_turns`); n != 0 {
			t.Fatalf("an unauthenticated post stored %d turns", n)
		}
	}
	for _, sc := range []apptest.Scenario{
		{Name: "no token", Method: http.MethodGet, Path: "/api/conversation-memory", WantStatus: 401, WantError: "Authentication required"},
		{Name: "not a JWT", Method: http.MethodGet, Path: "/api/conversation-memory", Token: "not-a-jwt", WantStatus: 401, WantError: "Invalid authentication"},
		{Name: "post without a token", Method: http.MethodPost, Path: "/api/conversation-memory", Body: `{"conversation_turns":[{"role":"user","content":"x"}]}`,
			WantStatus: 401, WantError: "Authentication required", Check: noTurnStored},
		{Name: "health without a token", Method: http.MethodGet, Path: "/healthz", WantStatus: http.StatusOK},
	} {
		sc.Run(t, svc)
	}
}

func TestFacilitatorsCannotSeeEachOther(t *testing.T) {
	svc, a, aLearner := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	b := svc.NewUser(t)
	svc.PostTurns(t, a, aLearner, apptest.Exchange("Emma loves dinosaurs and the word brontosaurus.", "Use dinosaurs for counting.")...).WantStatus(http.StatusOK)
	svc.PostTurns(t, a, "", apptest.Exchange("General planning about brontosaurus week.", "Plan it on Monday.")...).WantStatus(http.StatusOK)

	if got := svc.Call(t, b.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusOK); got.Body["conversation_update"] != nil {
		t.Fatalf("B sees A's general memory: %s", got.Raw)
	}
	learners := svc.Call(t, b.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
	if len(learners.Body["learners"].([]any)) != 0 {
		t.Fatalf("B sees A's learners: %s", learners.Raw)
	}
	found := svc.Call(t, b.Token, http.MethodGet, "/api/conversation-memory?search=brontosaurus&include_archive=true", nil).WantStatus(http.StatusOK)
	if found.Body["count"] != 0.0 {
		t.Fatalf("B finds A's conversations: %s", found.Raw)
	}
	// B's clear of the general conversation is B's own, and leaves A's alone.
	svc.Call(t, b.Token, http.MethodDelete, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	got := svc.Call(t, a.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	if number(got.Object("conversation_update")["turn_count"]) != 2 {
		t.Fatalf("A's memory changed: %s", got.Raw)
	}
	found = svc.Call(t, a.Token, http.MethodGet, "/api/conversation-memory?search=brontosaurus", nil).WantStatus(http.StatusOK)
	if found.Body["count"] != 2.0 {
		t.Fatalf("A should find both conversations: %s", found.Raw)
	}
}
