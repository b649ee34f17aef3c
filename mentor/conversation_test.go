package mentor_test

import (
	"encoding/json"
	"slices"
	"testing"

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
