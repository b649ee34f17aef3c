package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"mentormemory/mentor"
	"mentormemory/migrations"
	"mentormemory/postgres"
)

// TestAPostAddsItsTurnsWordsToTheConversationsSearchWords checks that the
// words posts add to an active conversation's search vector, the stored
// turns' own vectors concatenated (migration 0036), are the words of the
// conversation's active turns, each counted as often as parsing their
// whole text counts it, and none of another conversation's.
func TestAPostAddsItsTurnsWordsToTheConversationsSearchWords(t *testing.T) {
	pool, facilitator, learner := newLearnerDatabase(t)
	ctx := asFacilitator(context.Background(), facilitator)
	store := postgres.NewStore(pool, 50)
	post := func(learnerID *string, turns ...mentor.Turn) {
		t.Helper()
		if _, err := store.AppendTurns(ctx, mentor.AppendRequest{LearnerID: learnerID, Turns: turns}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		post(&learner,
			mentor.Turn{Role: mentor.RoleUser, Content: fmt.Sprintf("Ada read %d chapters about dragons and castles.", i+2)},
			mentor.Turn{Role: mentor.RoleAssistant, Content: "Reading about dragons builds her vocabulary; ask her to retell a chapter."})
		post(nil, mentor.Turn{Role: mentor.RoleUser, Content: fmt.Sprintf("The whole class planted %d sunflowers.", i+5)})
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

// TestAMisspelledWordIsCorrectedThroughTheTrigramIndex checks that search's
// correction of a word the facilitator never used (private.closest_word,
// migration 0061) finds the closest of the caller's own words through the
// vocabulary's trigram index, not by comparing every word of theirs (which
// row-level security had the planner do, about 1 ms per thousand words),
// and that it finds nothing in another facilitator's vocabulary.
func TestAMisspelledWordIsCorrectedThroughTheTrigramIndex(t *testing.T) {
	pool, facilitator, _ := newLearnerDatabase(t)
	other, _ := seedLearner(t, pool)
	ctx := context.Background()
	// A vocabulary of a thousand words, with "piano" among it, beside a hundred
	// other facilitators' (so that reading the whole table is no cheaper
	// than the index); one of them has a word closer to the misspelling.
	for _, q := range []string{
		`insert into auth.users (id) select gen_random_uuid() from generate_series(1, 100)`,
		`insert into public.search_vocabulary (facilitator_id, word)
			select u.id, 'word' || n from auth.users u, generate_series(1, 1000) n
			where u.id not in ($1::uuid, $2::uuid)
			union all select $1::uuid, 'lesson' || n from generate_series(1, 1000) n
			union all select $1::uuid, 'piano'
			union all select $2::uuid, 'piann'`,
		// As autovacuum leaves it: the trigram index's pending list merged.
		`vacuum analyze public.search_vocabulary`,
	} {
		var args []any
		if strings.Contains(q, "$2") {
			args = []any{facilitator, other}
		}
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	indexScans := func() (trigram, primary int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, `select
				sum(idx_scan) filter (where indexrelname = 'search_vocabulary_trgm'),
				sum(idx_scan) filter (where indexrelname = 'search_vocabulary_pkey')
			from pg_stat_user_indexes where relname = 'search_vocabulary'`).Scan(&trigram, &primary); err != nil {
			t.Fatal(err)
		}
		return trigram, primary
	}
	closest := func(role, of string) (*string, error) {
		t.Helper()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		var word *string
		if err := tx.QueryRow(ctx, `select set_config('role', $1, true),
				set_config('request.jwt.claim.sub', $2, true)`, role, facilitator).Scan(new(string), new(string)); err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRow(ctx, `select private.closest_word($1::uuid, 'pianno')`, of).Scan(&word); err != nil {
			return nil, err
		}
		// The statistics reach the shared counters when the transaction ends.
		if _, err := tx.Exec(ctx, `select pg_stat_force_next_flush()`); err != nil {
			t.Fatal(err)
		}
		return word, tx.Commit(ctx)
	}

	trigramBefore, primaryBefore := indexScans()
	if word, err := closest("memory_service", facilitator); err != nil || word == nil || *word != "piano" {
		t.Errorf("closest word to pianno: %v (%v), want the facilitator's own piano", word, err)
	}
	if trigram, primary := indexScans(); trigram != trigramBefore+1 || primary != primaryBefore {
		t.Errorf("the correction scanned the trigram index %d times and the primary key %d times, want once and never",
			trigram-trigramBefore, primary-primaryBefore)
	}
	if word, err := closest("memory_service", other); err != nil || word != nil {
		t.Errorf("asked for another facilitator's closest word, got %v (%v), want none", word, err)
	}
	// The Data API's signed-in role cannot call it.
	if _, err := closest("authenticated", facilitator); err == nil || !strings.Contains(err.Error(), "42501") {
		t.Errorf("authenticated called private.closest_word: %v, want permission denied", err)
	}
}
