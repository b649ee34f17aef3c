package migrations_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
)

// No row-level policy holds a sub-select: Citus refuses one on a
// distributed table ("Subqueries are not supported in policies"), so a
// policy written so would stop `server migrate --citus` (migration 0039).
// The deparsed text is searched for SELECT, which every sub-select shows
// (( SELECT …), EXISTS (SELECT …), IN (SELECT …)).
func TestNoPolicyHoldsASubSelect(t *testing.T) {
	pool := newDatabase(t)
	rows, err := pool.Query(t.Context(), `select format('%s on %s.%s: %s', policyname, schemaname, tablename,
			concat_ws(' with check ', qual, with_check))
		from pg_policies
		where qual ~* '\mselect\M' or with_check ~* '\mselect\M'
		order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	offending, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(offending) > 0 {
		t.Fatalf("policies with a sub-select, which Citus refuses (write auth.uid() without (select …)):\n%s",
			strings.Join(offending, "\n"))
	}
}

// Without the sub-select, Postgres still computes auth.uid(), which parses
// the caller's claims, once per statement and not once per row (migration
// 0039): in the service's statements, which filter on facilitator_id = $1,
// the policy is a one-time check; in a read through the Data API, which
// does not, it is the condition of the index scan. The test reads the
// plans: no per-row filter may call current_setting, which auth.uid()
// inlines to.
func TestPoliciesAreCheckedOncePerStatement(t *testing.T) {
	pool := newDatabase(t)
	// Many facilitators, as in production, each with a few hundred turns.
	apptest.Exec(t, pool, `insert into auth.users (id) select gen_random_uuid() from generate_series(1, 100)`)
	apptest.Exec(t, pool, `insert into public.conversation_turns (facilitator_id, role, content)
		select u.id, 'user', 'turn ' || n from auth.users u, generate_series(1, 200) n`)
	apptest.Exec(t, pool, `analyze`)
	me := apptest.Scalar[string](t, pool, `select id::text from auth.users limit 1`)

	perRow := func(t *testing.T, tx pgx.Tx, query string) {
		t.Helper()
		rows, err := tx.Query(t.Context(), `explain `+query)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range lines {
			if strings.Contains(line, "Filter:") && !strings.Contains(line, "One-Time Filter:") &&
				strings.Contains(line, "current_setting") {
				t.Errorf("%s checks the policy on every row:\n%s", query, strings.Join(lines, "\n"))
				return
			}
		}
	}
	t.Run("the service's statement, under its generic plan", func(t *testing.T) {
		asService(t, pool, me, func(tx pgx.Tx) {
			apptest.Exec(t, tx, `set local plan_cache_mode = force_generic_plan`)
			apptest.Exec(t, tx, `prepare turns(uuid) as
				select count(*) from public.conversation_turns where facilitator_id = $1 and role = 'user'`)
			perRow(t, tx, fmt.Sprintf(`execute turns('%s')`, me))
		})
	})
	t.Run("a read through the Data API", func(t *testing.T) {
		asSignedIn(t, pool, me, func(tx pgx.Tx) {
			perRow(t, tx, `select count(*) from public.conversation_turns where role = 'user'`)
		})
	})
}
