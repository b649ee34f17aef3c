package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"mentormemory/mentor"
	"mentormemory/postgres"
)

// TestAnArchivedConversationIsReadInOneRoundTripByItsIndex reads a page of
// a short archived conversation next to a long one of the same learner: the
// page holds that conversation's turns alone, in order, comes in one round
// trip with the conversation, and the generic plan of the turns' read
// probes the archive's index instead of reading the facilitator's turns.
func TestAnArchivedConversationIsReadInOneRoundTripByItsIndex(t *testing.T) {
	ctx := context.Background()
	pool, counter := countedPool(t)
	facilitator, learner := seedLearner(t, pool)
	long, short := uuid.NewString(), uuid.NewString()
	for archive, turns := range map[string]int{long: 5000, short: 120} {
		for _, q := range []string{
			`insert into public.conversation_history_archive (id, facilitator_id, learner_id, summary, turn_count)
				values ($3::uuid, $1::uuid, $2::uuid, 'Summary of ' || $4::int || ' turns', $4::int)`,
			`insert into public.conversation_turns (facilitator_id, learner_id, archive_id, role, content, client_turn_id)
				select $1::uuid, $2::uuid, $3::uuid, case when n % 2 = 1 then 'user' else 'assistant' end,
					'turn ' || n || ' of ' || $4::int, 'c-' || n
				from generate_series(1, $4::int) n`,
		} {
			if _, err := pool.Exec(ctx, q, facilitator, learner, archive, turns); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	if _, err := pool.Exec(ctx, `analyze public.conversation_turns`); err != nil {
		t.Fatal(err)
	}

	store := postgres.NewStore(pool, 50)
	counter.n.Store(0)
	got, err := store.Archive(asFacilitator(ctx, facilitator), mentor.ArchiveQuery{ID: short, Limit: 50, Offset: 100})
	if err != nil {
		t.Fatal(err)
	}
	if n := counter.n.Load(); n != 1 {
		t.Errorf("reading an archive made %d round trips, want 1", n)
	}
	turns, err := got.Turns.Turns()
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != short || got.LearnerID == nil || *got.LearnerID != learner || got.TurnCount != 120 ||
		got.Summary != "Summary of 120 turns" || got.NextOffset != nil || len(turns) != 20 {
		t.Fatalf("the last page: %+v with %d turns; want the short archive's last 20 turns and no next page", got, len(turns))
	}
	for i, turn := range turns {
		n := 101 + i
		if turn.Content != fmt.Sprintf("turn %d of 120", n) || turn.ID != fmt.Sprintf("c-%d", n) || turn.CreatedAt.IsZero() {
			t.Fatalf("turn %d of the page is %+v, want turn %d of the short archive", i, turn, n)
		}
	}

	// The same read under the generic plan prepared statements settle on.
	genericPlanReadsOnly(t, pool, "archive_turns", postgres.ArchiveTurnsSQL,
		`'`+facilitator+`', '`+short+`', 50, 100`, "conversation_turns_archive_in_order")
}
