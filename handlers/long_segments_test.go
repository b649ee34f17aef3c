package handlers_test

import (
	"math/rand"
	"net/http"
	"strings"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
	"mentormemory/migrations"
)

// Turns as long as the API allows, of made-up words (which take the most
// room in a search vector), never wedge a conversation: a segment ends
// before its vector could pass Postgres's 1 MB limit, every post is stored,
// every turn stays searchable, and clearing archives it all.
func TestLongTurnsNeverWedgeAConversation(t *testing.T) {
	svc, a := apptest.StartWithUser(t, apptest.Options{})
	rng := rand.New(rand.NewSource(1))
	longTurn := func() string {
		var sb strings.Builder
		for sb.Len() < mentor.MaxTurnChars-20 {
			for range 6 + rng.Intn(7) {
				sb.WriteByte(byte('a' + rng.Intn(26)))
			}
			sb.WriteByte(' ')
		}
		return strings.TrimSpace(sb.String())
	}
	// 80 turns of 20,000 characters: 1.6 MB of text, which a single
	// segment's vector cannot hold.
	var last string
	for range 8 {
		turns := make([]mentor.Turn, 10)
		for i := range turns {
			turns[i] = mentor.Turn{Role: []string{"user", "assistant"}[i%2], Content: longTurn()}
		}
		last = strings.Fields(turns[9].Content)[0]
		svc.PostTurns(t, a, "", turns...).WantStatus(http.StatusOK)
	}
	if n := svc.Count(t, `select count(*) from public.conversation_turns where facilitator_id = $1::uuid`, a.ID); n != 80 {
		t.Fatalf("%d turns stored, want 80", n)
	}
	if n := svc.Count(t, `select count(*) from public.conversation_history_archive where facilitator_id = $1::uuid`, a.ID); n == 0 {
		t.Fatal("no segment was archived, though no vector could hold them all")
	}
	// The last turn's words are found in the active segment.
	found := svc.Call(t, a.Token, http.MethodGet, "/api/conversation-memory?include_archive=true&search="+last, nil).WantStatus(http.StatusOK)
	if found.Body["count"] == 0.0 {
		t.Fatalf("the last turn's word %q is not found", last)
	}
	svc.Call(t, a.Token, http.MethodDelete, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	if n := svc.Count(t, `select count(*) from public.conversation_turns t where t.facilitator_id = $1::uuid and `+migrations.ArchiveOf("t")+` is null`, a.ID); n != 0 {
		t.Fatalf("%d turns left active after clearing", n)
	}
	if n := svc.Count(t, `select coalesce(sum(turn_count), 0) from public.conversation_history_archive where facilitator_id = $1::uuid`, a.ID); n != 80 {
		t.Fatalf("the archive holds %d turns, want all 80", n)
	}
}
