package migrations_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
)

// The service ends the job it leased in the transaction of the job's work,
// as the job's facilitator (migration 0042), and that is all it may do to
// the queue: only a running job under a lease, only its own caller's, only
// to done with the lease cleared; never a job's payload.
func TestTheServiceEndsOnlyARunningJobOfItsCaller(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	b := apptest.NewUser(t, pool).ID
	job := func(facilitator, status string) int64 {
		t.Helper()
		return apptest.Scalar[int64](t, pool, `insert into public.memory_jobs
			(facilitator_id, kind, dedupe_key, status, lease_token, leased_until)
			values ($1::uuid, 'extract', gen_random_uuid()::text, $2,
				case when $2 = 'running' then gen_random_uuid() end, case when $2 = 'running' then now() + interval '1 minute' end)
			returning id`, facilitator, status)
	}
	running, pending, othersRunning := job(a, "running"), job(a, "pending"), job(b, "running")
	const end = `update public.memory_jobs set status = 'done', finished_at = now(), lease_token = null, last_error = null
		where facilitator_id = $1::uuid and id = $2`

	asService(t, pool, a, func(tx pgx.Tx) {
		if n, err := tryExec(t, tx, end, a, pending); err != nil || n != 0 {
			t.Errorf("A ends its pending job: %d rows, %v; want none", n, err)
		}
		if n, err := tryExec(t, tx, end, b, othersRunning); err != nil || n != 0 {
			t.Errorf("A ends B's running job: %d rows, %v; want none", n, err)
		}
		_, err := tryExec(t, tx, `update public.memory_jobs set status = 'pending', lease_token = null where id = $1`, running)
		wantState(t, err, insufficientPrivilege, "A puts its running job back")
		_, err = tryExec(t, tx, `update public.memory_jobs set payload = '{}' where id = $1`, running)
		wantState(t, err, insufficientPrivilege, "A rewrites its running job's payload")
		if n, err := tryExec(t, tx, end, a, running); err != nil || n != 1 {
			t.Errorf("A ends its running job: %d rows, %v; want it ended", n, err)
		}
	})
	if n := apptest.Count(t, pool, `select count(*) from public.memory_jobs where status = 'done'`); n != 1 {
		t.Errorf("%d jobs done, want A's running one alone", n)
	}
}
