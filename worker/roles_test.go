package worker_test

import (
	"context"
	"testing"

	"mentormemory/worker"
)

// A trigger on the queue's tables runs as whoever writes them. The worker's
// statements (leasing, finishing and failing jobs, ending idle sessions)
// must then run with no more rights than the service's own roles: never as
// a superuser, never as the tables' owner.
func TestWorkerWritesNeitherAsSuperuserNorAsOwner(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.exec(`create function public.refuse_privileged_writer() returns trigger language plpgsql as $$
		begin
			if pg_has_role(current_user, (select relowner from pg_class where oid = tg_relid), 'usage') then
				raise exception 'privileged writer: %', current_user;
			end if;
			return new;
		end $$`)
	for _, table := range []string{"memory_jobs", "mentor_sessions"} {
		e.exec(`create trigger refuse_privileged_writer before update on public.` + table + `
			for each row execute function public.refuse_privileged_writer()`)
	}
	// The probe itself: the owner's update is refused.
	if _, err := e.pool.Exec(context.Background(), `update memory_jobs set attempts = attempts`); err != nil {
		t.Fatalf("the probe fires on no row yet: %v", err)
	}

	e.reply = func(int) (int, string) { return 200, memoriesReply("Alex has a dog named Max") }
	e.post("gotta go feed my dog Max", "Say hi to Max!")
	if _, err := e.pool.Exec(context.Background(), `update memory_jobs set attempts = attempts`); err == nil {
		t.Fatal("the probe let the owner update a job")
	}
	if !e.runOnce() {
		t.Fatal("the queued job did not run")
	}
	if n := e.count(`select count(*) from memory_jobs where status = 'done'`); n != 1 {
		t.Fatalf("%d jobs done, want 1", n)
	}

	// A failed attempt is recorded by the worker's role too.
	e.reply = func(int) (int, string) { return 503, "" }
	e.post("Max learnt to sit", "Good dog!")
	e.runOnce()
	if n := e.count(`select count(*) from memory_jobs where status <> 'done' and last_error is not null and lease_token is null`); n != 1 {
		t.Fatalf("%d failed attempts recorded, want 1", n)
	}

	// The idle sweep finds the session, and ends it as the facilitator.
	e.exec(`alter table public.mentor_sessions disable trigger refuse_privileged_writer`)
	e.exec(`update mentor_sessions set last_activity_at = now() - interval '31 minutes'`)
	e.exec(`alter table public.mentor_sessions enable trigger refuse_privileged_writer`)
	if n, err := e.worker.EndIdleSessions(context.Background()); err != nil || n != 1 {
		t.Fatalf("ended %d idle sessions (%v), want 1", n, err)
	}
	if n := e.count(`select count(*) from mentor_sessions where ended_at is not null`); n != 1 {
		t.Fatalf("%d sessions ended, want 1", n)
	}
}
