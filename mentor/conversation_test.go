package mentor_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"mentormemory/mentor"
)

// TestTurnsJSONRoundTrip checks that a conversation's last turns survive
// encoding and decoding the conversation, and that none encode as [].
func TestTurnsJSONRoundTrip(t *testing.T) {
	turns := []mentor.Turn{
		{ID: "t-1", Role: mentor.RoleUser, Content: `She said "<no>" & left`},
		{Role: mentor.RoleAssistant, Content: "Try again tomorrow — gently."},
	}
	recent, err := mentor.NewTurnsJSON(turns)
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := json.Marshal(mentor.ConversationRecord{ID: "c", RecentTurns: recent})
	if err != nil {
		t.Fatal(err)
	}
	var decoded mentor.ConversationRecord
	if err := json.Unmarshal(encoded, &decoded); err != nil {
		t.Fatal(err)
	}
	got, err := decoded.RecentTurns.Turns()
	if err != nil || !slices.Equal(got, turns) {
		t.Fatalf("turns after a round trip: %+v, %v; want %+v", got, err, turns)
	}

	empty, err := json.Marshal(mentor.ConversationRecord{})
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(empty, &fields); err != nil || string(fields["recent_turns"]) != "[]" {
		t.Fatalf("no recent turns encode as %s (%v), want []", fields["recent_turns"], err)
	}
}

// TestLatestTurnsKeepTheStoredOnesAsTheyAre checks that appending to a
// conversation's last turns keeps the latest few, the stored ones carried
// over whatever their spacing and key order (as Postgres hands them over),
// the new ones encoded as turns are.
func TestLatestTurnsKeepTheStoredOnesAsTheyAre(t *testing.T) {
	stored := mentor.TurnsJSON(`[{"role": "user", "content": "one"}, {"content": "two", "role": "assistant", "id": "a2"}]`)
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	latest, err := stored.WithLatest([]mentor.Turn{{Role: mentor.RoleUser, Content: "three", CreatedAt: at}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"content": "two", "role": "assistant", "id": "a2"},{"role":"user","content":"three","created_at":"2026-11-26T09:00:00Z"}]`
	if string(latest) != want {
		t.Errorf("latest turns %s, want %s", latest, want)
	}
	if none, err := mentor.TurnsJSON(nil).WithLatest(nil, 10); err != nil || string(none) != "[]" {
		t.Errorf("no turns: %s, %v; want []", none, err)
	}

	// Commas, brackets, braces and escaped quotes inside a turn's text
	// are text.
	tricky := `{"role": "user", "content": "He wrote \"a, b], {c\" \\"}`
	latest, err = mentor.TurnsJSON(" [ "+tricky+" , "+tricky+" ] ").WithLatest(nil, 5)
	if err != nil || string(latest) != "["+tricky+","+tricky+"]" {
		t.Errorf("turns with punctuation in their text: %s, %v", latest, err)
	}
	decoded, err := latest.Turns()
	if err != nil || len(decoded) != 2 || decoded[1].Content != `He wrote "a, b], {c" \` {
		t.Errorf("decoded %+v, %v", decoded, err)
	}
	for _, bad := range []string{`{"role": "user"}`, `[{"role": "user"`, `["open]`} {
		if _, err := mentor.TurnsJSON(bad).WithLatest(nil, 5); err == nil {
			t.Errorf("%s taken for an array of turns", bad)
		}
	}
}
