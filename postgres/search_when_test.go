package postgres_test

import (
	"strings"
	"testing"
	"time"

	"mentormemory/mentor"
)

// TestAWhenQuestionPrefersTheConversationThatSaysWhen searches, as the API
// does, conversations that share a question's words, one of which says
// when the thing happened, and checks that a question asking when ranks it
// first though its words alone rank it second: an archived one for a
// learner and an active general one, and with the limit of one result.
func TestAWhenQuestionPrefersTheConversationThatSaysWhen(t *testing.T) {
	ctx, store, _, _, ada := newLearnerStore(t)
	svc := offlineService(store)
	held := time.Now().UTC().AddDate(0, -6, 0)
	talk := func(learner *string, archive bool, user, assistant string) {
		t.Helper()
		held = held.AddDate(0, 0, 7)
		turns := []mentor.Turn{
			{Role: mentor.RoleUser, Content: user, CreatedAt: held},
			{Role: mentor.RoleAssistant, Content: assistant, CreatedAt: held.Add(time.Minute)},
		}
		if _, err := svc.Update(ctx, learner, turns, false); err != nil {
			t.Fatal(err)
		}
		if archive {
			if _, err := svc.Clear(ctx, learner); err != nil {
				t.Fatal(err)
			}
		}
	}
	const (
		adaSaysWhen  = "Ada broke her wrist last week at the playground."
		tucsonIsWhen = "We moved to Tucson last spring, and the kids changed schools."
	)
	talk(&ada, true, adaSaysWhen, "Poor thing; audiobooks and quiet games help while it heals.")
	// Said later and with the words twice, so by its words it ranks first.
	talk(&ada, true, "Ada's wrist still aches and the cast on her wrist itches at night.",
		"A hair dryer on the cool setting helps an itchy cast.")
	talk(&ada, true, "Ada practised piano scales for twenty minutes.", "Short daily practice works best.")
	talk(&ada, true, "Ada read two chapters of her dragon book.", "Ask her to retell the chapter.")
	talk(nil, true, "The move to Tucson was a lot; Tucson still doesn't feel like home after the move.",
		"Give it a year; a few outings they look forward to help after a move.")
	talk(nil, false, tucsonIsWhen, "Moves are hard on kids; keep the old routines the same.")

	// first is the best-matching turn of the first result.
	first := func(question string, limit int) string {
		t.Helper()
		results, err := svc.Search(ctx, mentor.SearchQuery{Text: question, IncludeArchive: true, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(results) == 0 || limit > 0 && len(results) > limit {
			t.Fatalf("%q: %d results, want 1 to %d", question, len(results), limit)
		}
		turns, err := results[0].Matches.Turns()
		if err != nil || len(turns) == 0 {
			t.Fatalf("%q: first result has no matching turn (%v)", question, err)
		}
		return turns[0].Content
	}
	for _, c := range []struct {
		words, when, saysWhen string
	}{
		{"Ada break her wrist", "When did Ada break her wrist?", adaSaysWhen},
		{"we move to Tucson", "How long ago did we move to Tucson?", tucsonIsWhen},
	} {
		// The words alone prefer the conversation that does not say when.
		if got := first(c.words, 0); got == c.saysWhen {
			t.Fatalf("%q: the words alone rank %q first; the test needs it second", c.words, got)
		}
		for _, limit := range []int{0, 1} {
			if got := first(c.when, limit); got != c.saysWhen {
				t.Errorf("%q (limit %d): first result's turn %q, want %q", c.when, limit, got, c.saysWhen)
			}
		}
	}
	// Asking when something was said is not asking when it happened.
	if got := first("When did we talk about Ada's wrist?", 0); strings.Contains(got, "last week") {
		t.Errorf("a question about when we talked ranked %q first, want the conversation its words prefer", got)
	}
}
