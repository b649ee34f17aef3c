package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// The archive's search statistics (migration 0031) are what BM25 reads
// instead of every archived conversation's vector, so they must be exactly
// what the vectors say, whatever changed the archive: archiving, clearing,
// an import, a learner erased or deleted, an account erased, a user
// deleted, a migration rewriting rows.
func TestTheArchiveStatisticsAreWhatTheVectorsSay(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	svc := offlineService(postgres.NewStore(pool, 50))
	rng := rand.New(rand.NewPCG(3, 4))

	newFacilitator := func() (context.Context, string) {
		id := uuid.NewString()
		if _, err := pool.Exec(ctx, `insert into auth.users (id) values ($1::uuid)`, id); err != nil {
			t.Fatal(err)
		}
		return asFacilitator(ctx, id), id
	}
	addLearner := func(as context.Context, name string) *string {
		l, err := svc.AddLearner(as, name)
		if err != nil {
			t.Fatal(err)
		}
		return &l.ID
	}
	// talk posts n exchanges to a conversation; past 50 turns it archives.
	talk := func(as context.Context, learner *string, n int, words ...string) {
		for range n {
			turns := []mentor.Turn{
				{Role: mentor.RoleUser, Content: benchSentence(rng) + " " + strings.Join(words, " ")},
				{Role: mentor.RoleAssistant, Content: benchSentence(rng)},
			}
			if _, err := svc.Update(as, learner, turns, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	clear := func(as context.Context, learner *string) {
		if _, err := svc.Clear(as, learner); err != nil {
			t.Fatal(err)
		}
	}
	exact := func(step string) {
		t.Helper()
		if drift := statisticsDrift(t, pool); drift != "" {
			t.Fatalf("after %s, the statistics differ from the vectors (term: kept / recomputed):\n%s", step, drift)
		}
	}

	a, aID := newFacilitator()
	emma, maxLearner := addLearner(a, "Emma"), addLearner(a, "Max")
	b, bID := newFacilitator()
	noah := addLearner(b, "Noah")
	exact("nothing archived")

	talk(a, emma, 30, "zanzibar")     // 60 turns: one segment archived
	talk(a, maxLearner, 26, "quokka") // 52 turns: one segment archived
	talk(a, nil, 10, "marmalade")     // the general conversation, active
	talk(b, noah, 40, "zanzibar")     // another facilitator's archive
	clear(a, emma)                    // the rest of Emma's conversation archived
	clear(a, nil)                     // the general conversation archived
	talk(a, emma, 5, "trampoline")    // active again
	exact("archiving and clearing")
	if n := holding(t, pool, aID, ""); n != 4 {
		t.Fatalf("A's statistics count %d archived conversations, want 4", n)
	}

	// A second account imports A's export: its rows are counted as they are
	// inserted, and importing again adds nothing.
	var archive bytes.Buffer
	if err := svc.Export(a, nil, func(line []byte) error { archive.Write(line); archive.WriteByte('\n'); return nil }); err != nil {
		t.Fatal(err)
	}
	c, cID := newFacilitator()
	for range 2 {
		if _, err := svc.Import(c, bytes.NewReader(archive.Bytes())); err != nil {
			t.Fatal(err)
		}
	}
	exact("an import, twice")
	if got, want := holding(t, pool, cID, ""), holding(t, pool, aID, ""); got != want || got == 0 {
		t.Fatalf("the importing account counts %d archived conversations, the exported one %d", got, want)
	}

	// Erasing Emma counts her conversations out: her own word goes, the
	// words other conversations share stay.
	if _, err := svc.EraseLearner(a, *emma); err != nil {
		t.Fatal(err)
	}
	exact("a learner erased")
	if holding(t, pool, aID, "zanzibar") != 0 || holding(t, pool, aID, "quokka") != 1 || holding(t, pool, bID, "zanzibar") != 1 {
		t.Fatal("after erasing Emma, A still counts her word, or no longer Max's, or B lost its own")
	}

	// A learner deleted outright (the service may delete a learner, and its
	// conversations go by cascade).
	if _, err := pool.Exec(ctx, `delete from public.learners where facilitator_id = $1::uuid and id = $2::uuid`, aID, *maxLearner); err != nil {
		t.Fatal(err)
	}
	exact("a learner deleted")
	if holding(t, pool, aID, "quokka") != 0 {
		t.Fatal("a deleted learner's word is still counted")
	}

	// A migration rewriting archived rows (their search vectors change).
	if _, err := pool.Exec(ctx, `update public.conversation_history_archive set summary = 'Rewritten about kangaroos.'
		where facilitator_id = $1::uuid`, cID); err != nil {
		t.Fatal(err)
	}
	exact("archived rows rewritten")
	if holding(t, pool, cID, "kangaroo") == 0 {
		t.Fatal("a rewritten summary's word is not counted")
	}

	// The account erased, and a user deleted in Supabase Auth: nothing of
	// theirs is left, and the others' counts stand.
	if _, err := svc.EraseAccount(a); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `delete from auth.users where id = $1::uuid`, cID); err != nil {
		t.Fatal(err)
	}
	exact("an account erased and a user deleted")
	var left int
	if err := pool.QueryRow(ctx, `select count(*) from public.archive_term_stats where facilitator_id = any($1::uuid[])`,
		[]string{aID, cID}).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d statistics rows left of the erased account and the deleted user (%v)", left, err)
	}
	if holding(t, pool, bID, "") != 1 {
		t.Fatal("B's statistics changed")
	}
}

// statisticsDrift lists, for every facilitator, the terms whose kept
// statistics differ from those recomputed from the archived conversations'
// vectors; empty when they agree.
func statisticsDrift(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		with recomputed as (
			select a.facilitator_id, t.term, count(*) as conversations, sum(length(a.search_vector)) as lexemes
			from public.conversation_history_archive a
			cross join lateral unnest(array_prepend('', tsvector_to_array(a.search_vector))) as t(term)
			group by a.facilitator_id, t.term
		)
		select coalesce(k.term, r.term), coalesce(k.conversations || '/' || k.lexemes, 'none'),
			coalesce(r.conversations || '/' || r.lexemes, 'none')
		from public.archive_term_stats k
		full join recomputed r on r.facilitator_id = k.facilitator_id and r.term = k.term
		where k.conversations is distinct from r.conversations::integer or k.lexemes is distinct from r.lexemes
		order by 1 limit 20`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var term, kept, recomputed string
		if err := rows.Scan(&term, &kept, &recomputed); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  %q: %s / %s\n", term, kept, recomputed)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// holding is how many archived conversations of the facilitator the
// statistics say hold the word (its english stem), or, for "", how many
// archived conversations they count in all.
func holding(t *testing.T, pool *pgxpool.Pool, facilitator, word string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `select coalesce(sum(conversations), 0) from public.archive_term_stats
		where facilitator_id = $1::uuid and term = coalesce((select min(lexeme) from unnest(to_tsvector('english', $2))), '')`,
		facilitator, word).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A search ranks a long history by reading a bounded part of it: the
// conversations holding the question's rare words, found by the index over
// the archived conversations' words (all of them, so the ranking among
// them is exact), the newest others up to the budget, and, for a question
// naming a time, the newest of that time by the index on their last turn;
// BM25's statistics come from the archive's statistics. Never the whole
// archive, under the generic plan prepared statements settle on.
func TestSearchReadsALongHistoryByItsIndexesNotWhole(t *testing.T) {
	ctx := context.Background()
	pool, facilitator, learner := newLearnerDatabase(t)
	const archived, budget = 240, 40
	// Conversations three days apart, the newest last, all about homework;
	// five old ones also about a zeppelin. And as many of 30 other
	// facilitators, so that the planner sees one facilitator's share of a
	// table, as it is.
	others := []string{}
	for range 30 {
		other := uuid.NewString()
		if _, err := pool.Exec(ctx, `insert into auth.users (id) values ($1::uuid)`, other); err != nil {
			t.Fatal(err)
		}
		others = append(others, other)
	}
	for _, f := range append(others, facilitator) {
		var learnerOf any
		if f == facilitator {
			learnerOf = learner
		}
		if _, err := pool.Exec(ctx, `insert into public.conversation_history_archive
				(facilitator_id, learner_id, summary, conversation_turns, turn_count, archived_at)
			select $1::uuid, case when n % 2 = 0 then $2::uuid end, 'Homework, evening ' || n,
				jsonb_build_array(
					jsonb_build_object('role', 'user', 'created_at', now() - ($3 - n) * interval '3 days',
						'content', 'We argued about homework again' || case when n in (3, 17, 40, 77, 101) then ', and built a zeppelin' else '' end),
					jsonb_build_object('role', 'assistant', 'created_at', now() - ($3 - n) * interval '3 days',
						'content', 'Short homework blocks help, evening ' || n || '.')),
				2, now() - ($3 - n) * interval '3 days'
			from generate_series(1, $3) n`, f, learnerOf, archived); err != nil {
			t.Fatal(err)
		}
	}
	// As autovacuum leaves the tables: the words' index's pending entries
	// merged, the statistics fresh.
	if _, err := pool.Exec(ctx, `vacuum analyze public.conversation_history_archive, public.archive_term_stats`); err != nil {
		t.Fatal(err)
	}
	args := func(question, window string, budget int) string {
		return fmt.Sprintf(`'%s', '%s', 0.8, null, true, 20, 1.5, 1.2, 0.75, 32, 3, %s, 0.5, %d`, facilitator, question, window, budget)
	}

	asService := actingAs(facilitator)
	for _, c := range []struct {
		name, question, window, index string
	}{
		{"rare words", "the zeppelin and our homework", "null, null", "archive_search"},
		{"common words", "our homework again", "null, null", "archive_search"},
		{"words and a time", "homework in the past two years", "now() - interval '2 years', now()", "archive_owner_last_turn"},
	} {
		if pgtest.OnCitus() {
			break // noGenericPlanOnCitus
		}
		plan, raw := genericPlan(t, pool, "search_"+strings.ReplaceAll(c.name, " ", "_"), postgres.SearchSQL,
			args(c.question, c.window, budget), true, asService)
		indexes := plan.indexes()
		for _, want := range []string{c.index, "archive_term_stats_pkey"} {
			if !slices.Contains(indexes, want) {
				t.Errorf("%s: the plan reads %v, not %s", c.name, indexes, want)
			}
		}
		if whole := plan.seqScans(); slices.Contains(whole, "conversation_history_archive") || slices.Contains(whole, "archive_term_stats") {
			t.Errorf("%s: the plan reads %v whole:\n%s", c.name, whole, raw)
		}
		// The candidates (each found, then read for ranking) and the 20
		// results, at most: 4 × 40 rows of the archive's 240.
		if read := plan.rowsOf("conversation_history_archive"); read > 4*budget {
			t.Errorf("%s: the search read %.0f rows of the archive, want at most %d of its %d", c.name, read, 4*budget, archived)
		}
	}

	// The conversations holding the rare word are all found, old as they
	// are, and rank as they do when every conversation is read.
	top := func(budget int) []string {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		// The claims by SET LOCAL, as the service sets them, which Citus
		// passes on to the workers.
		for _, q := range []string{
			`select public.set_local('request.jwt.claims', '{"sub": "` + facilitator + `", "role": "authenticated"}')`,
			`select set_config('role', 'memory_service', true)`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := tx.Query(ctx, postgres.SearchSQL, facilitator, "the zeppelin and our homework", 0.8, nil, true, 5,
			1.5, 1.2, 0.75, 32, 3, nil, nil, 0.5, budget)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			values, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, fmt.Sprint(values[0]))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	zeppelins := apptest.Column[string](t, pool, `select id::text from public.conversation_history_archive
		where facilitator_id = $1::uuid and search_vector @@ 'zeppelin'::tsquery`, facilitator)
	bounded, whole := top(budget), top(archived)
	found := slices.Sorted(slices.Values(bounded))
	slices.Sort(zeppelins)
	if !slices.Equal(bounded, whole) || len(zeppelins) != 5 || !slices.Equal(found, zeppelins) {
		t.Errorf("the top 5 with a budget of %d: %v; reading everything: %v; the zeppelin conversations: %v", budget, bounded, whole, zeppelins)
	}
}

// TestSearchReadsOnlyTheActiveSegmentOfALongConversation checks that the
// turns search reads for an active conversation's matches are those of its
// active segment, found above the highest range of its archives (migrations
// 0037, 0055 and 0060), however many turns its archives hold by range.
func TestSearchReadsOnlyTheActiveSegmentOfALongConversation(t *testing.T) {
	pgtest.SkipOnCitus(t, noGenericPlanOnCitus)
	ctx := context.Background()
	pool, facilitator, learner := newLearnerDatabase(t)
	// 40 archives of 50 turns each, held by range, then 6 active turns; only
	// the active ones mention the zeppelin.
	for _, q := range []string{
		`insert into public.conversation_turns (facilitator_id, learner_id, role, content)
			select $1::uuid, $2::uuid, case when n % 2 = 1 then 'user' else 'assistant' end, 'Homework blocks, evening ' || n
			from generate_series(1, 2000) n`,
		`insert into public.conversation_history_archive (facilitator_id, learner_id, summary, turn_count, first_turn_id, last_turn_id)
			select $1::uuid, $2::uuid, 'Homework, part ' || k, 50, min(t.id), max(t.id)
			from (select id, (row_number() over (order by id) - 1) / 50 as k from public.conversation_turns
				where facilitator_id = $1::uuid and learner_id = $2::uuid) t
			group by k`,
		`insert into public.conversation_turns (facilitator_id, learner_id, role, content)
			select $1::uuid, $2::uuid, 'user', 'Ada built a zeppelin, part ' || n from generate_series(1, 6) n`,
		`insert into public.conversation_updates (facilitator_id, learner_id, turn_count, turns_vector)
			values ($1::uuid, $2::uuid, 6, to_tsvector('english', 'Ada built a zeppelin'))`,
	} {
		if _, err := pool.Exec(ctx, q, facilitator, learner); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	besideALongHistory(t, pool)
	asService := actingAs(facilitator)
	plan, raw := genericPlan(t, pool, "search_active_segment", postgres.SearchSQL, fmt.Sprintf(
		`'%s', 'zeppelin', 0.8, '%s', true, 20, 1.5, 1.2, 0.75, 32, 3, null, null, 0.5, %d`,
		facilitator, learner, postgres.CandidateBudget), true, asService)
	if read := plan.rowsOf("conversation_turns"); read > 8 {
		t.Errorf("search read %.0f turns for the active conversation's matches, want its 6 active ones, not the 2,000 its archives hold:\n%s",
			read, raw)
	}
}

// A word the facilitator never used is corrected to the closest one they
// did through the trigram index of their vocabulary (migration 0064), so
// that a misspelling costs a teacher with thousands of words what it costs
// anyone: under the generic plan a prepared search settles on, as the
// service, the correction reads the few words that share the typed word's
// trigrams, not the whole vocabulary.
func TestAMisspellingIsCorrectedWithoutReadingTheWholeVocabulary(t *testing.T) {
	pgtest.SkipOnCitus(t, noGenericPlanOnCitus)
	caller, store, pool, facilitator, learner := newLearnerStore(t)
	ctx := context.Background()
	mustAppend(t, caller, store, &learner, apptest.Exchange(
		"Ada practised fractions with a pizza cut into eighths.", "Pizza slices make fractions concrete; try quarters next."))
	// Five thousand more words of hers, of eight letters each.
	const vocabulary = 5000
	if _, err := pool.Exec(ctx, `insert into public.search_vocabulary (facilitator_id, word)
		select $1::uuid, left(translate(md5(n::text), '0123456789', 'ghijklmnop'), 8)
		from generate_series(1, $2::int) n on conflict do nothing`, facilitator, vocabulary); err != nil {
		t.Fatal(err)
	}
	// Beside her, 500 facilitators with 100 words each, so that, as in a
	// deployment, reading the whole vocabulary table looks as costly as it is.
	amongManyFacilitators(t, pool)
	if _, err := pool.Exec(ctx, `insert into public.search_vocabulary (facilitator_id, word)
		select u.id, left(translate(md5(u.id::text || n), '0123456789', 'ghijklmnop'), 8)
		from auth.users u cross join generate_series(1, 100) n
		where u.id <> $1::uuid on conflict do nothing`, facilitator); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `analyze public.search_vocabulary`); err != nil {
		t.Fatal(err)
	}

	found, err := store.Search(caller, mentor.SearchQuery{Text: "fractoins", LearnerID: &learner, IncludeArchive: true, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || !strings.Contains(found[0].Snippet, "<mark>fractions</mark>") {
		t.Fatalf("searching %q found %+v, want Ada's conversation with fractions marked", "fractoins", found)
	}
	plan, raw := genericPlan(t, pool, "search_misspelt", postgres.SearchSQL, fmt.Sprintf(
		`'%s', 'fractoins', 0.8, '%s', true, 20, 1.5, 1.2, 0.75, 32, 3, null, null, 0.5, %d`,
		facilitator, learner, postgres.CandidateBudget), true, actingAs(facilitator))
	if read := plan.rowsOf("search_vocabulary"); read > 50 {
		t.Errorf("correcting one word read %.0f words of a vocabulary of %d, want at most 50:\n%s", read, vocabulary, raw)
	}
}
