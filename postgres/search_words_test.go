package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"mentormemory/mentor"
	"mentormemory/migrations"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
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
// correction of a word a teacher with a large vocabulary never used finds
// the closest of their own words through the vocabulary's trigram index
// (through the view of migration 0061), not by comparing every word of
// theirs, which row-level security had the planner do (about 1 ms per
// thousand words), and never takes another facilitator's word.
func TestAMisspelledWordIsCorrectedThroughTheTrigramIndex(t *testing.T) {
	pgtest.SkipOnCitus(t, noGenericPlanOnCitus)
	pool, facilitator, learner := newLearnerDatabase(t)
	other, _ := seedLearner(t, pool)
	ctx := context.Background()
	// 8,000 words with "piano" among them, beside a hundred other
	// facilitators' thousand; one of them has a word closer to the
	// misspelling. Her conversation mentions the piano.
	for _, step := range []struct {
		sql  string
		args []any
	}{
		{`insert into auth.users (id) select gen_random_uuid() from generate_series(1, 100)`, nil},
		{`insert into public.search_vocabulary (facilitator_id, word)
			select u.id, 'word' || n from auth.users u, generate_series(1, 1000) n
			where u.id not in ($1::uuid, $2::uuid)
			union all select $1::uuid, 'lesson' || n from generate_series(1, 8000) n
			union all select $1::uuid, 'piano'
			union all select $2::uuid, 'piann'`, []any{facilitator, other}},
		{`insert into public.conversation_updates (facilitator_id, learner_id, turn_count, turns_vector)
			values ($1::uuid, $2::uuid, 2, to_tsvector('english', 'Ada practised the piano'))`, []any{facilitator, learner}},
		// As autovacuum leaves it: the trigram index's pending list merged.
		{`vacuum analyze public.search_vocabulary`, nil},
	} {
		if _, err := pool.Exec(ctx, step.sql, step.args...); err != nil {
			t.Fatalf("%s: %v", step.sql, err)
		}
	}
	asService := []string{
		`select set_config('request.jwt.claims', '{"sub": "` + facilitator + `", "role": "authenticated"}', false)`,
		`set role memory_service`,
	}
	plan, raw := customPlan(t, pool, "search_misspelled", postgres.SearchSQL, fmt.Sprintf(
		`'%s', 'pianno', 0.8, null, true, 20, 1.5, 1.2, 0.75, 32, 3, null, null, 0.5, %d`,
		facilitator, postgres.CandidateBudget), true, asService)
	if !slices.Contains(plan.indexes(), "search_vocabulary_trgm") || plan.rowsOf("search_vocabulary") > 100 {
		t.Errorf("the correction read %.0f words through indexes %v, want a few through search_vocabulary_trgm:\n%s",
			plan.rowsOf("search_vocabulary"), plan.indexes(), raw)
	}

	results, err := postgres.NewStore(pool, 50).Search(asFacilitator(ctx, facilitator),
		mentor.SearchQuery{Text: "pianno", IncludeArchive: true, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	// Only her own word, piano, finds it: the other facilitator's piann,
	// closer to the misspelling, would not.
	if len(results) != 1 || results[0].LearnerID == nil || *results[0].LearnerID != learner {
		t.Errorf("searching pianno found %d conversations, want Ada's about the piano", len(results))
	}
}
