package migrations_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mentormemory/app/apptest"
)

// Usage counters only grow: a signed-in user through Supabase's Data API
// may neither write them nor call use_quota, and even the service, acting
// for a user, cannot lower, reset or move that user's counters, nor touch
// another's: use_quota only adds to the caller's own, and refuses past the
// quota with PT429, the counter and the seconds left.
func TestUsersCannotLowerTheirCounters(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	b := apptest.NewUser(t, pool).ID
	asService(t, pool, b, func(tx pgx.Tx) {
		apptest.Exec(t, tx, `select public.use_quota('turns/day', 7, 100)`)
	})
	used := func(facilitator, counter string) int64 {
		t.Helper()
		return apptest.Scalar[int64](t, pool, `select coalesce(sum(used), 0)::bigint from public.usage_counters
			where facilitator_id = $1::uuid and counter = $2`, facilitator, counter)
	}

	asService(t, pool, a, func(tx pgx.Tx) {
		apptest.Exec(t, tx, `select public.use_quota('turns/day', 5, 10)`)
		for _, stmt := range []string{
			`update public.usage_counters set used = 0`,
			`update public.usage_counters set window_ends_at = now() - interval '1 day'`,
			`delete from public.usage_counters`,
			`insert into public.usage_counters (facilitator_id, counter, window_ends_at, used) values (auth.uid(), 'read/minute', now(), 0)`,
			`truncate public.usage_counters`,
		} {
			_, err := tryExec(t, tx, stmt)
			wantState(t, err, insufficientPrivilege, stmt)
		}
		_, err := tryExec(t, tx, `select public.use_quota('turns/day', -5, 10)`)
		wantState(t, err, "22023", "a negative amount")
		_, err = tryExec(t, tx, `select public.use_quota('turns/week', 1, 10)`)
		wantState(t, err, "22023", "a counter with another window")

		_, err = tryExec(t, tx, `select public.use_quota('turns/day', 6, 10)`)
		wantState(t, err, "PT429", "past the quota")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.ConstraintName != "turns/day" {
			t.Errorf("the refusal names the counter in CONSTRAINT: %v", err)
		} else if seconds, convErr := strconv.Atoi(pgErr.Detail); convErr != nil || seconds < 1 || seconds > 86400 {
			t.Errorf("the refusal's DETAIL is %q, want the seconds until the day ends", pgErr.Detail)
		}
	})
	// Read in a transaction of its own: on Citus the counters that
	// use_quota changed as its owner may not be read as the service's role
	// in the same transaction (the service never reads them).
	asService(t, pool, a, func(tx pgx.Tx) {
		if n := apptest.Count(t, tx, `select count(*) from public.usage_counters`); n != 1 {
			t.Errorf("A sees %d counters, want only its own one", n)
		}
	})
	if got := used(a, "turns/day"); got != 5 {
		t.Errorf("A's turns/day = %d after the attempts, want 5: a refusal adds nothing", got)
	}
	if got := used(b, "turns/day"); got != 7 {
		t.Errorf("B's turns/day = %d after A's calls, want 7", got)
	}

	// Without a quota, usage that happened already counts past the limit.
	asService(t, pool, a, func(tx pgx.Tx) {
		apptest.Exec(t, tx, `select public.use_quota('turns/day', 6, null)`)
	})
	if got := used(a, "turns/day"); got != 11 {
		t.Errorf("A's turns/day = %d, want 11", got)
	}

	// Once the window has ended, the next use starts a new one.
	apptest.Exec(t, pool, `update public.usage_counters set window_ends_at = now() where facilitator_id = $1::uuid`, a)
	asService(t, pool, a, func(tx pgx.Tx) {
		apptest.Exec(t, tx, `select public.use_quota('turns/day', 3, 10)`)
	})
	if got := used(a, "turns/day"); got != 3 {
		t.Errorf("A's turns/day = %d in a new window, want 3", got)
	}

	// Neither a signed-in user, nor anon, nor a transaction without claims
	// counts for anyone.
	asSignedIn(t, pool, a, func(tx pgx.Tx) {
		_, err := tryExec(t, tx, `select public.use_quota('turns/day', 1, null)`)
		wantState(t, err, insufficientPrivilege, "a signed-in user calls use_quota")
	})
	asAnon(t, pool, string(apptest.Claims(a)), func(tx pgx.Tx) {
		_, err := tryExec(t, tx, `select public.use_quota('turns/day', 1, null)`)
		wantState(t, err, insufficientPrivilege, "anon calls use_quota")
	})
	inTx(t, pool, "memory_service", "", func(tx pgx.Tx) {
		_, err := tryExec(t, tx, `select public.use_quota('turns/day', 1, null)`)
		wantState(t, err, insufficientPrivilege, "use_quota without a signed-in user")
	})
}
