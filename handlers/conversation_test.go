package handlers_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
)

// number reads a JSON number as an int.
func number(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func TestConversationLifecycle(t *testing.T) {
	svc, dana, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")

	// Nothing yet.
	got := svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if got.Body["conversation_update"] != nil {
		t.Fatalf("want no memory yet, got %s", got.Raw)
	}

	res := svc.PostTurns(t, dana, emma, apptest.Exchange(
		"Emma is frustrated with long division and cried over homework.",
		"Try breaking long division into estimate, multiply, subtract, bring down; practise one step a day.")...).
		WantStatus(http.StatusOK)
	conv := res.Object("conversation_update")
	if number(conv["turn_count"]) != 2 || res.Body["turns_added"] != 2.0 || res.Body["summarizer"] != "offline" {
		t.Fatalf("unexpected post response %s", res.Raw)
	}
	if conv["learner_id"] != emma || !strings.Contains(strings.ToLower(conv["summary"].(string)), "division") {
		t.Fatalf("summary should cover the exchange: %s", res.Raw)
	}
	if recent := conv["recent_turns"].([]any); len(recent) != 2 {
		t.Fatalf("want 2 recent turns, got %d", len(recent))
	}

	got = svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if got.Object("conversation_update")["id"] != conv["id"] || number(got.Object("conversation_update")["turn_count"]) != 2 {
		t.Fatalf("GET does not return the stored memory: %s", got.Raw)
	}
	// The general conversation is a separate one.
	got = svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	if got.Body["conversation_update"] != nil {
		t.Fatalf("general memory should be empty: %s", got.Raw)
	}

	del := svc.Call(t, dana.Token, http.MethodDelete, "/api/conversation-memory?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if del.Body["archived"] != true {
		t.Fatalf("clearing should archive: %s", del.Raw)
	}
	got = svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if got.Body["conversation_update"] != nil {
		t.Fatalf("memory should be cleared: %s", got.Raw)
	}
	if n := svc.Count(t, `select count(*) from conversation_history_archive where learner_id = $1::uuid and turn_count = 2`, emma); n != 1 {
		t.Fatalf("want 1 archived segment of 2 turns, got %d", n)
	}
	// Clearing again has nothing to archive.
	del = svc.Call(t, dana.Token, http.MethodDelete, "/api/conversation-memory?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if del.Body["archived"] != false {
		t.Fatalf("second clear should archive nothing: %s", del.Raw)
	}

	// Without include_archive, the archive is not searched; with it, the
	// cleared conversation is found.
	notFound := svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?search=division", nil).WantStatus(http.StatusOK)
	if notFound.Body["count"] != 0.0 {
		t.Fatalf("archive searched without include_archive: %s", notFound.Raw)
	}
	found := svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?search=division&include_archive=true", nil).
		WantStatus(http.StatusOK)
	if found.Body["count"] != 1.0 {
		t.Fatalf("archived conversation should be found: %s", found.Raw)
	}
	result := found.Body["results"].([]any)[0].(map[string]any)
	if result["archived"] != true || result["learner_context"] != "Learner-specific" ||
		!strings.Contains(result["snippet"].(string), "<mark>") || len(result["matches"].([]any)) == 0 {
		t.Fatalf("unexpected search result: %s", found.Raw)
	}
}

// A long answer goes out in one piece with its length, not chunked.
func TestAnswersCarryTheirLength(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	long := strings.Repeat("We talked about the bedtime routine and the tablet again. ", 20)
	for i := range 5 {
		svc.PostTurns(t, u, "", mentor.Turn{Role: mentor.RoleUser, Content: fmt.Sprint(i, " ", long)},
			mentor.Turn{Role: mentor.RoleAssistant, Content: fmt.Sprint(i, " ", long)}).WantStatus(http.StatusOK)
	}
	got := svc.Call(t, u.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	if len(got.Raw) < 4096 || got.ContentLength != int64(len(got.Raw)) {
		t.Fatalf("answer of %d bytes came with Content-Length %d (-1: chunked)", len(got.Raw), got.ContentLength)
	}
}

// TestTurnsComeBackAsPosted checks that the last turns a post and a read
// return, and the turns a search matched, are the posted ones, field for
// field (client id, role, content with markup and non-ASCII text, time
// stored), however they are carried from the database to the answer.
func TestTurnsComeBackAsPosted(t *testing.T) {
	svc, dana := apptest.StartWithUser(t, apptest.Options{})
	posted := []mentor.Turn{
		{ID: "t-1", Role: mentor.RoleUser, Content: `Léa wrote "<b>I hate maths</b>" & tore the page.`},
		{Role: mentor.RoleAssistant, Content: "Ask her which step felt worst — then start there.\nOne step a day."},
	}
	res := svc.PostTurns(t, dana, "", posted...).WantStatus(http.StatusOK)
	got := svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	found := svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?search=maths", nil).WantStatus(http.StatusOK)
	if found.Body["count"] != 1.0 {
		t.Fatalf("the search should find the conversation: %s", found.Raw)
	}

	for name, turns := range map[string]any{
		"post":   res.Object("conversation_update")["recent_turns"],
		"read":   got.Object("conversation_update")["recent_turns"],
		"search": found.Body["results"].([]any)[0].(map[string]any)["matches"],
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
	if !bytes.Contains(got.Raw, []byte(`\u003cb\u003e`)) {
		t.Errorf("markup in a turn should come escaped, as in every other answer: %s", got.Raw)
	}
}

// TestTurnsMayCarryTheTimeTheyWereSaid checks that a client importing
// history can post each turn's time: it is stored as the turn's time,
// comes back in the post's answer and in a read, and the archived
// conversation covers the span of its turns; a turn without a time is
// stored at the server's, and a time further ahead than the server's clock
// allows is refused, storing nothing of the post.
func TestTurnsMayCarryTheTimeTheyWereSaid(t *testing.T) {
	svc, dana, sam := apptest.StartWithLearner(t, apptest.Options{}, "Sam")
	said := time.Date(2023, time.December, 4, 18, 30, 0, 0, time.FixedZone("", -5*3600))
	posted := []mentor.Turn{
		{ID: "h1", Role: mentor.RoleUser, Content: "Sam spent the afternoon at the aquarium.", CreatedAt: said},
		{ID: "h2", Role: mentor.RoleAssistant, Content: "Ask him which fish he liked best.", CreatedAt: said.Add(time.Minute)},
		{ID: "n1", Role: mentor.RoleUser, Content: "He still talks about the octopus."},
	}
	before := time.Now()
	res := svc.PostTurns(t, dana, sam, posted...).WantStatus(http.StatusOK)
	got := svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?learner_id="+sam, nil).WantStatus(http.StatusOK)
	for name, answer := range map[string]apptest.Response{"post": res, "read": got} {
		recent := answer.Object("conversation_update")["recent_turns"].([]any)
		if len(recent) != 3 {
			t.Fatalf("%s: %d recent turns, want 3: %s", name, len(recent), answer.Raw)
		}
		for i, want := range []time.Time{said, said.Add(time.Minute)} {
			at, err := time.Parse(time.RFC3339, recent[i].(map[string]any)["created_at"].(string))
			if err != nil || !at.Equal(want) {
				t.Errorf("%s: turn %d said at %v (%v), want %s", name, i+1, at, err, want)
			}
		}
		at, err := time.Parse(time.RFC3339, recent[2].(map[string]any)["created_at"].(string))
		if err != nil || at.Before(before.Add(-time.Minute)) || at.After(time.Now().Add(time.Minute)) {
			t.Errorf("%s: a turn without a time was stored at %v (%v), want the server's time", name, at, err)
		}
	}

	svc.Call(t, dana.Token, http.MethodDelete, "/api/conversation-memory?learner_id="+sam, nil).WantStatus(http.StatusOK)
	var first, last time.Time
	if err := svc.Pool.QueryRow(t.Context(), `select first_turn_at, last_turn_at from conversation_history_archive
		where learner_id = $1::uuid`, sam).Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	if !first.Equal(said) || last.Before(before.Add(-time.Minute)) {
		t.Errorf("the archive covers %s – %s, want %s – the post's time", first, last, said)
	}

	ahead := time.Now().Add(10 * time.Minute).UTC().Truncate(time.Second)
	refused := svc.Call(t, dana.Token, http.MethodPost, "/api/conversation-memory", map[string]any{
		"learner_id": sam, "conversation_turns": []map[string]any{
			{"role": "user", "content": "From the future"},
			{"role": "assistant", "content": "Not yet said", "created_at": ahead.Format(time.RFC3339)}}}).
		WantStatus(http.StatusBadRequest)
	want := "Turn 2: created_at " + ahead.Format(time.RFC3339) + " is in the future (the server's clock reads "
	if msg, _ := refused.Body["error"].(string); !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "at most 5m0s ahead is accepted)") {
		t.Errorf("refused with %s, want %q…", refused.Raw, want)
	}
	if n := svc.Count(t, `select count(*) from conversation_turns where learner_id = $1::uuid`, sam); n != 3 {
		t.Errorf("%d turns stored after the refused post, want the 3 before it", n)
	}
}
