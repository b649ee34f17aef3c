package handlers_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/memory"
)

func TestConversationLifecycle(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	dana := e.newUser()
	emma := e.newLearner(dana, "Emma")

	// Nothing yet.
	got := e.call(dana.token, http.MethodGet, "/api/conversation-memory?learner_id="+emma, nil).wantStatus(http.StatusOK)
	if got.body["conversation_update"] != nil {
		t.Fatalf("want no memory yet, got %s", got.raw)
	}

	res := e.post(dana, emma, exchange(
		"Emma is frustrated with long division and cried over homework.",
		"Try breaking long division into estimate, multiply, subtract, bring down; practise one step a day.")...).
		wantStatus(http.StatusOK)
	conv := conversation(res)
	if number(conv["turn_count"]) != 2 || res.body["turns_added"] != 2.0 || res.body["summarizer"] != "offline" {
		t.Fatalf("unexpected post response %s", res.raw)
	}
	if conv["learner_id"] != emma || !strings.Contains(strings.ToLower(conv["summary"].(string)), "division") {
		t.Fatalf("summary should cover the exchange: %s", res.raw)
	}
	if recent := conv["recent_turns"].([]any); len(recent) != 2 {
		t.Fatalf("want 2 recent turns, got %d", len(recent))
	}

	got = e.call(dana.token, http.MethodGet, "/api/conversation-memory?learner_id="+emma, nil).wantStatus(http.StatusOK)
	if conversation(got)["id"] != conv["id"] || number(conversation(got)["turn_count"]) != 2 {
		t.Fatalf("GET does not return the stored memory: %s", got.raw)
	}
	// The general conversation is a separate one.
	got = e.call(dana.token, http.MethodGet, "/api/conversation-memory", nil).wantStatus(http.StatusOK)
	if got.body["conversation_update"] != nil {
		t.Fatalf("general memory should be empty: %s", got.raw)
	}

	del := e.call(dana.token, http.MethodDelete, "/api/conversation-memory?learner_id="+emma, nil).wantStatus(http.StatusOK)
	if del.body["archived"] != true {
		t.Fatalf("clearing should archive: %s", del.raw)
	}
	got = e.call(dana.token, http.MethodGet, "/api/conversation-memory?learner_id="+emma, nil).wantStatus(http.StatusOK)
	if got.body["conversation_update"] != nil {
		t.Fatalf("memory should be cleared: %s", got.raw)
	}
	if n := e.count(`select count(*) from conversation_history_archive where learner_id = $1::uuid and turn_count = 2`, emma); n != 1 {
		t.Fatalf("want 1 archived segment of 2 turns, got %d", n)
	}
	// Clearing again has nothing to archive.
	del = e.call(dana.token, http.MethodDelete, "/api/conversation-memory?learner_id="+emma, nil).wantStatus(http.StatusOK)
	if del.body["archived"] != false {
		t.Fatalf("second clear should archive nothing: %s", del.raw)
	}

	found := e.call(dana.token, http.MethodGet, "/api/conversation-memory?search=division&include_archive=true", nil).
		wantStatus(http.StatusOK)
	if found.body["count"] != 1.0 {
		t.Fatalf("archived conversation should be found: %s", found.raw)
	}
	result := found.body["results"].([]any)[0].(map[string]any)
	if result["archived"] != true || result["learner_context"] != "Learner-specific" ||
		!strings.Contains(result["snippet"].(string), "<mark>") || len(result["matches"].([]any)) == 0 {
		t.Fatalf("unexpected search result: %s", found.raw)
	}
	// Without include_archive, the archive is not searched.
	notFound := e.call(dana.token, http.MethodGet, "/api/conversation-memory?search=division", nil).wantStatus(http.StatusOK)
	if notFound.body["count"] != 0.0 {
		t.Fatalf("archive searched without include_archive: %s", notFound.raw)
	}
}

// A long answer goes out in one piece with its length, not chunked.
func TestAnswersCarryTheirLength(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	u := e.newUser()
	long := strings.Repeat("We talked about the bedtime routine and the tablet again. ", 20)
	for i := range 5 {
		e.post(u, "", memory.Turn{Role: memory.RoleUser, Content: fmt.Sprint(i, " ", long)},
			memory.Turn{Role: memory.RoleAssistant, Content: fmt.Sprint(i, " ", long)}).wantStatus(http.StatusOK)
	}
	got := e.call(u.token, http.MethodGet, "/api/conversation-memory", nil).wantStatus(http.StatusOK)
	if len(got.raw) < 4096 || got.contentLength != int64(len(got.raw)) {
		t.Fatalf("answer of %d bytes came with Content-Length %d (-1: chunked)", len(got.raw), got.contentLength)
	}
}

// TestTurnsComeBackAsPosted checks that the last turns a post and a read
// return, and the turns a search matched, are the posted ones, field for
// field (client id, role, content with markup and non-ASCII text, time
// stored), however they are carried from the database to the answer.
func TestTurnsComeBackAsPosted(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	dana := e.newUser()
	posted := []memory.Turn{
		{ID: "t-1", Role: memory.RoleUser, Content: `Léa wrote "<b>I hate maths</b>" & tore the page.`},
		{Role: memory.RoleAssistant, Content: "Ask her which step felt worst — then start there.\nOne step a day."},
	}
	res := e.post(dana, "", posted...).wantStatus(http.StatusOK)
	got := e.call(dana.token, http.MethodGet, "/api/conversation-memory", nil).wantStatus(http.StatusOK)
	found := e.call(dana.token, http.MethodGet, "/api/conversation-memory?search=maths", nil).wantStatus(http.StatusOK)
	if found.body["count"] != 1.0 {
		t.Fatalf("the search should find the conversation: %s", found.raw)
	}

	for name, turns := range map[string]any{
		"post":   conversation(res)["recent_turns"],
		"read":   conversation(got)["recent_turns"],
		"search": found.body["results"].([]any)[0].(map[string]any)["matches"],
	} {
		expected := posted
		if name == "search" {
			expected = posted[:1] // only the first turn says "maths"
		}
		list := turns.([]any)
		if len(list) != len(expected) {
			t.Fatalf("%s: %d turns, want %d: %v", name, len(list), len(expected), list)
		}
		for i, want := range expected {
			turn := list[i].(map[string]any)
			wantKeys := 3 // role, content, created_at
			if want.ID != "" {
				wantKeys++
				if turn["id"] != want.ID {
					t.Errorf("%s: turn %d id %v, want %q", name, i, turn["id"], want.ID)
				}
			}
			if len(turn) != wantKeys || turn["role"] != want.Role || turn["content"] != want.Content || turn["created_at"] == "" {
				t.Errorf("%s: turn %d is %v, want %+v with its time", name, i, turn, want)
			}
		}
	}
	if !bytes.Contains(got.raw, []byte(`\u003cb\u003e`)) {
		t.Errorf("markup in a turn should come escaped, as in every other answer: %s", got.raw)
	}
}
