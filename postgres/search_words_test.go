package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
	"mentormemory/migrations"
)

// TestAPostAddsItsTurnsWordsToTheConversationsSearchWords checks that the
// words posts add to an active conversation's search vector, the stored
// turns' own vectors concatenated (migration 0036), are the words of the
// conversation's active turns, each counted as often as parsing their
// whole text counts it, and none of another conversation's.
func TestAPostAddsItsTurnsWordsToTheConversationsSearchWords(t *testing.T) {
	ctx, store, pool, facilitator, learner := newLearnerStore(t)
	for i := range 3 {
		mustAppend(t, ctx, store, &learner, apptest.Exchange(fmt.Sprintf("Ada read %d chapters about dragons and castles.", i+2),
			"Reading about dragons builds her vocabulary; ask her to retell a chapter."))
		mustAppend(t, ctx, store, nil, []mentor.Turn{{Role: mentor.RoleUser, Content: fmt.Sprintf("The whole class planted %d sunflowers.", i+5)}})
	}

	for _, learnerID := range []*string{&learner, nil} {
		var got, want string
		if err := pool.QueryRow(context.Background(), `select
				(select string_agg(w.lexeme || ':' || cardinality(w.positions), ' ' order by w.lexeme) from unnest(c.turns_vector) w),
				(select string_agg(w.lexeme || ':' || cardinality(w.positions), ' ' order by w.lexeme)
					from unnest((select to_tsvector('english', string_agg(t.content, ' ' order by t.id))
						from public.conversation_turns t
						where t.facilitator_id = c.facilitator_id and t.learner_id is not distinct from c.learner_id
							and `+migrations.ArchiveOf("t")+` is null)) w)
			from public.conversation_updates c
			where c.facilitator_id = $1::uuid and c.learner_id is not distinct from $2::uuid`,
			facilitator, learnerID).Scan(&got, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("conversation of learner %v: search words\n%s\nwant the turns' words\n%s", learnerID, got, want)
		}
	}
}
