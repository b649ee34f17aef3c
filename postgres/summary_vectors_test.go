package postgres_test

import (
	"context"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
)

// Search reads an active conversation's summary words from the vector the
// worker stored (migration 0057) while the summary is unchanged, and parses
// the summary itself once it changed, so it never finds a conversation by
// words its summary no longer holds; parsing a facilitator's summaries
// takes them off the list, and no one else's.
func TestSearchReadsTheStoredSummaryWordsOnlyWhileTheSummaryIsUnchanged(t *testing.T) {
	as, store, pool, facilitator, learner := newLearnerStore(t)
	ctx := context.Background()
	mustAppend(t, as, store, &learner, apptest.Exchange("Ada practised her spelling list.", "Short daily practice works well."))
	setSummary := func(summary string) {
		t.Helper()
		apptest.Exec(t, pool, `update public.conversation_updates set summary = $2 where facilitator_id = $1::uuid`,
			facilitator, summary)
	}
	found := func(word string) bool {
		t.Helper()
		results, err := store.Search(as, mentor.SearchQuery{Text: word, LearnerID: &learner, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		return len(results) == 1
	}
	listed := func() int {
		t.Helper()
		return apptest.Count(t, pool, `select count(*) from private.summary_vectors_due where facilitator_id = $1::uuid`, facilitator)
	}
	due := func(settled time.Duration) []mentor.SummariesDue {
		t.Helper()
		due, err := store.SummariesDue(ctx, settled, 10)
		if err != nil {
			t.Fatal(err)
		}
		return due
	}

	setSummary("Ada loves origami.")
	if listed() != 1 || !found("origami") {
		t.Fatalf("a changed summary: listed %d times, found by its word %v; want listed once and found", listed(), found("origami"))
	}
	if d := due(time.Hour); len(d) != 0 {
		t.Fatalf("due within the settle time: %+v", d)
	}
	d := due(0)
	if len(d) != 1 || d[0].FacilitatorID != facilitator || len(d[0].ConversationIDs) != 1 {
		t.Fatalf("due %+v, want the facilitator's one conversation", d)
	}

	// Someone else cannot parse it, nor take it off the list.
	other, _ := seedLearner(t, pool)
	if n, err := store.RefreshSummaryVectors(asFacilitator(ctx, other), d[0].ConversationIDs); err != nil || n != 0 || listed() != 1 {
		t.Fatalf("another facilitator parsed %d (%v), and %d left listed; want none parsed and it still listed", n, err, listed())
	}
	if n, err := store.RefreshSummaryVectors(as, d[0].ConversationIDs); err != nil || n != 1 || listed() != 0 {
		t.Fatalf("parsed %d (%v), %d left listed; want one parsed and none listed", n, err, listed())
	}

	// Search now reads the stored words: words stored for the same
	// summary (as no real parse would) are what it finds it by.
	apptest.Exec(t, pool, `update public.conversation_updates set summary_vector = public.summary_search_vector('Ada loves zeppelins.')
		where facilitator_id = $1::uuid`, facilitator)
	if !found("zeppelins") || found("origami") {
		t.Fatalf("with stored words: found by them %v, by the summary's own %v; want the stored words read", found("zeppelins"), found("origami"))
	}

	// A new summary drops the stored words in the same write.
	setSummary("Ada now folds kites.")
	if !found("kites") || found("zeppelins") || listed() != 1 {
		t.Fatalf("after the summary changed: found by its new word %v, by the stored words %v, listed %d; want the new summary read and listed again",
			found("kites"), found("zeppelins"), listed())
	}

	// Clearing the conversation takes it off the list.
	if _, err := store.ClearConversation(as, &learner); err != nil {
		t.Fatal(err)
	}
	if listed() != 0 {
		t.Errorf("a cleared conversation is still listed")
	}
}
