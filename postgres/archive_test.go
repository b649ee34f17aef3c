package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// TestAnArchivedConversationIsReadInOneRoundTripByItsIndex reads a page of
// a short archived conversation next to a long one of the same learner: the
// page holds that conversation's turns alone, in order, comes in one round
// trip with the conversation, and the generic plan of the turns' read
// probes indexes instead of reading the facilitator's turns: the archive's
// row by its key, the turns linked to it (as an import writes them) by the
// index of linked turns, and the turns of its range of log ids (as
// archiving leaves them, migration 0037) by the conversation's index.
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
	// Archives that hold their turns by range (as archiving leaves them):
	// forty of a turn each.
	if _, err := pool.Exec(ctx, `with turns as (
			insert into public.conversation_turns (facilitator_id, learner_id, role, content)
			select $1::uuid, $2::uuid, 'user', 'an earlier session ' || n from generate_series(1, 40) n
			returning id)
		insert into public.conversation_history_archive (facilitator_id, learner_id, summary, turn_count, first_turn_id, last_turn_id)
		select $1::uuid, $2::uuid, 'An earlier session', 1, id, id from turns`, facilitator, learner); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `analyze public.conversation_turns, public.conversation_history_archive`); err != nil {
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

	// The same read under the generic plan prepared statements settle on:
	// the turns through the index of linked turns and a range of the
	// facilitator's, never all of them. (The archive's own row is one of
	// a few here, which the planner may read whole.)
	if !pgtest.OnCitus() { // noGenericPlanOnCitus
		plan, raw := genericPlan(t, pool, "archive_turns", postgres.ArchiveTurnsSQL, `'`+facilitator+`', '`+short+`', 50, 100`, false, nil)
		if indexes := plan.indexes(); !slices.Contains(indexes, "conversation_turns_archive_in_order") ||
			!slices.ContainsFunc(indexes, func(i string) bool {
				return i == "conversation_turns_pkey" || i == "conversation_turns_scope_recent"
			}) || slices.Contains(plan.seqScans(), "conversation_turns") {
			t.Fatalf("the generic plan of an archive's page reads indexes %v and tables %v whole:\n%s", indexes, plan.seqScans(), raw)
		}
	}

	// An archive that holds its turns by range: those of its conversation
	// in it, not those of another.
	ranged := uuid.NewString()
	if _, err := pool.Exec(ctx, `insert into public.conversation_turns (facilitator_id, learner_id, role, content)
		select $1::uuid, l, 'user', 'ranged turn ' || n || case when l is null then ' (general)' else '' end
		from generate_series(1, 30) n, unnest(array[$2::uuid, null]) l`, facilitator, learner); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `insert into public.conversation_history_archive (id, facilitator_id, learner_id, summary,
			turn_count, first_turn_id, last_turn_id)
		select $3::uuid, $1::uuid, $2::uuid, 'Ranged', 30, min(id), max(id) from public.conversation_turns
		where facilitator_id = $1::uuid and learner_id = $2::uuid and content like 'ranged turn %'`,
		facilitator, learner, ranged); err != nil {
		t.Fatal(err)
	}
	got, err = store.Archive(asFacilitator(ctx, facilitator), mentor.ArchiveQuery{ID: ranged, Limit: 25, Offset: 0})
	if err != nil {
		t.Fatal(err)
	}
	if turns, err = got.Turns.Turns(); err != nil {
		t.Fatal(err)
	}
	if len(turns) != 25 || got.NextOffset == nil || turns[0].Content != "ranged turn 1" || turns[24].Content != "ranged turn 25" {
		t.Fatalf("the first page of the ranged archive: %d turns (%v … ), next %v; want its first 25", len(turns), turns[:min(2, len(turns))], got.NextOffset)
	}
}

// TestAnArchivesTurnsAreReadWithoutTheOtherLearnersSaidMeanwhile checks
// that reading the turns an archive holds by its range of log ids (a page
// of it, and the turns that match in search) reads its conversation's
// turns alone, not every turn of the facilitator's said in that span: a
// teacher who talks about one learner between others leaves the others'
// turns inside each archive's range, and under row-level security the
// planner could not use the conversation's index (migration 0058's view
// lets it).
func TestAnArchivesTurnsAreReadWithoutTheOtherLearnersSaidMeanwhile(t *testing.T) {
	pgtest.SkipOnCitus(t, noGenericPlanOnCitus)
	caller, store, pool, facilitator, ada, bo := newClassStore(t)
	ctx := context.Background()
	// Archives of 10 turns; between two of Ada's exchanges, a hundred of
	// Bo's turns. Her archive holds the exchanges about a zeppelin; those
	// left active are about a kite, so that search reads the archive's
	// turns alone.
	for n := range 7 {
		toy := "zeppelin"
		if n >= 5 {
			toy = "kite"
		}
		mustAppend(t, caller, store, &ada, apptest.Exchange(
			fmt.Sprintf("Ada built a %s, part %d", toy, n), fmt.Sprintf("Ask Ada how the %s flies, part %d", toy, n)))
		boTalks(t, pool, facilitator, bo, 100)
	}
	var archive string
	var boInRange int
	if err := pool.QueryRow(ctx, `select a.id::text, (select count(*) from public.conversation_turns t
			where t.facilitator_id = a.facilitator_id and t.learner_id = $2::uuid and t.id between a.first_turn_id and a.last_turn_id)
		from public.conversation_history_archive a where a.facilitator_id = $1::uuid and a.learner_id = $3::uuid`,
		facilitator, bo, ada).Scan(&archive, &boInRange); err != nil {
		t.Fatal(err)
	}
	if boInRange < 400 {
		t.Fatalf("Ada's archive spans %d of Bo's turns, want the 400 or more said between hers", boInRange)
	}
	besideALongHistory(t, pool)
	asService := actingAs(facilitator)
	plan, raw := genericPlan(t, pool, "archive_page", postgres.ArchiveTurnsSQL, `'`+facilitator+`', '`+archive+`', 50, 0`, true, asService)
	if read := plan.rowsOf("conversation_turns"); read > 12 {
		t.Errorf("a page of Ada's archive of 10 turns read %.0f turns, want at most 12:\n%s", read, raw)
	}
	plan, raw = genericPlan(t, pool, "search_ada", postgres.SearchSQL, fmt.Sprintf(
		`'%s', 'zeppelin', 0.8, '%s', true, 20, 1.5, 1.2, 0.75, 32, 3, null, null, 0.5, %d`,
		facilitator, ada, postgres.CandidateBudget), true, asService)
	// The archive's 10 turns, each read once for its matches.
	if read := plan.rowsOf("conversation_turns"); read > 12 {
		t.Errorf("searching Ada's conversations read %.0f turns, want at most 12, none of Bo's %d in her archive's span:\n%s",
			read, boInRange, raw)
	}
}

// The clear asks whether the conversation has active turns before it
// archives them. A teacher's other learners talk in between, so that above
// the conversation's last archive lie other learners' turns before its
// own; under row-level security the check must still read the
// conversation's turns alone.
func TestTheClearsCheckReadsNoOtherLearnersTurns(t *testing.T) {
	pgtest.SkipOnCitus(t, noGenericPlanOnCitus)
	caller, store, pool, facilitator, ada, bo := newClassStore(t)
	ctx := context.Background()
	exchange := func(n int) {
		t.Helper()
		mustAppend(t, caller, store, &ada, apptest.Exchange(
			fmt.Sprintf("Ada read a chapter, part %d", n), fmt.Sprintf("Ask Ada what happens next, part %d", n)))
	}
	// Ada's first ten turns, then four hundred of Bo's, then Ada's next
	// exchange, which archives her first ten: her two active turns come
	// after all of Bo's.
	for n := range 5 {
		exchange(n)
	}
	boTalks(t, pool, facilitator, bo, 400)
	exchange(5)
	var boAbove int
	if err := pool.QueryRow(ctx, `select count(*) from public.conversation_turns t
		where t.facilitator_id = $1::uuid and t.learner_id = $2::uuid
			and t.id > (select max(a.last_turn_id) from public.conversation_history_archive a
				where a.facilitator_id = $1::uuid and a.learner_id = $3::uuid)`,
		facilitator, bo, ada).Scan(&boAbove); err != nil {
		t.Fatal(err)
	}
	if boAbove != 400 {
		t.Fatalf("%d of Bo's turns lie above Ada's archive, want 400", boAbove)
	}
	amongManyFacilitators(t, pool)
	plan, raw := genericPlan(t, pool, "clear_check", postgres.HasActiveTurnsSQL, `'`+facilitator+`', '`+ada+`'`, true, actingAs(facilitator))
	if read := plan.rowsOf("conversation_turns"); read > 2 {
		t.Errorf("the clear's check of Ada's conversation read %.0f turns, want at most 2, none of Bo's %d above her archive:\n%s",
			read, boAbove, raw)
	}
}

// amongManyFacilitators adds 500 facilitators of 40 turns each and
// refreshes the planner's statistics, so that, as in a deployment, one
// facilitator's share of the turns is small and a plan that reads the
// table until it meets theirs looks as costly as it is.
func amongManyFacilitators(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	for _, q := range []string{
		`insert into auth.users (id) select gen_random_uuid() from generate_series(1, 500)`,
		`insert into public.conversation_turns (facilitator_id, role, content)
			select u.id, 'user', 'another day at school, turn ' || n
			from auth.users u cross join generate_series(1, 40) n
			where not exists (select 1 from public.learners l where l.facilitator_id = u.id)`,
		`vacuum analyze auth.users, public.conversation_turns, public.conversation_history_archive`,
	} {
		if _, err := pool.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// newClassStore is newLearnerStore with a second learner of the
// facilitator's, Bo, and a store that archives every 10 turns, so that a
// few exchanges of Ada's fill archives between Bo's turns.
func newClassStore(t *testing.T) (caller context.Context, store *postgres.Store, pool *pgxpool.Pool, facilitator, ada, bo string) {
	t.Helper()
	pool, facilitator, ada = newLearnerDatabase(t)
	bo = uuid.NewString()
	if _, err := pool.Exec(context.Background(), `insert into public.learners (id, facilitator_id, name) values ($1::uuid, $2::uuid, 'Bo')`,
		bo, facilitator); err != nil {
		t.Fatal(err)
	}
	return asFacilitator(context.Background(), facilitator), postgres.NewStore(pool, 10), pool, facilitator, ada, bo
}

// boTalks adds n turns of Bo's to his conversation, straight into the log,
// as if said between Ada's.
func boTalks(t *testing.T, pool *pgxpool.Pool, facilitator, bo string, n int) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `insert into public.conversation_turns (facilitator_id, learner_id, role, content)
		select $1::uuid, $2::uuid, 'user', 'Bo built a zeppelin, turn ' || i from generate_series(1, $3::int) i`,
		facilitator, bo, n); err != nil {
		t.Fatal(err)
	}
}
