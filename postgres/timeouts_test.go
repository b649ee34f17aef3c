package postgres_test

import (
	"errors"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
	"mentormemory/postgres/pgtest"
)

// No statement of a request waits for another's row lock for long, nor runs
// for long: either ends in a 503 the client may retry, the transaction
// rolled back and its connection given back, well before the request's
// own timeout (the store's default, 15 s).
func TestRequestsStatementsAreBoundedInTime(t *testing.T) {
	ctx, store, pool, facilitator, learner := newLearnerStore(t)
	post := func(n string) error {
		_, err := store.AppendTurns(ctx, mentor.AppendRequest{LearnerID: &learner, Turns: readingExchange(n)})
		return err
	}
	if err := post("1"); err != nil {
		t.Fatal(err)
	}

	// Another transaction holds the conversation's row: the post's wait for
	// it ends with the lock timeout.
	holder, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, `select 1 from public.conversation_updates where facilitator_id = $1::uuid for update`, facilitator); err != nil {
		t.Fatal(err)
	}
	err = post("2")
	if mentor.ErrorCode(err) != mentor.CodeUnavailable || !errors.Is(err, mentor.ErrBusy) {
		t.Fatalf("a post waiting on a held row: %v, want a 503 of the service guarding itself", err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// A statement that runs too long (here a trigger that sleeps past the
	// limit) is stopped by the statement timeout.
	for _, statement := range []string{
		`create function public.slow_insert() returns trigger language plpgsql as $$
		begin perform pg_sleep(30); return new; end $$`,
		`create trigger slow_insert before insert on public.conversation_turns
		for each row execute function public.slow_insert()`,
	} {
		if _, err := pool.Exec(ctx, statement); err != nil {
			t.Fatal(err)
		}
	}
	err = post("3")
	var memErr *mentor.Error
	if !errors.As(err, &memErr) || memErr.Code != mentor.CodeUnavailable ||
		memErr.Message != "The request took too long; please retry or ask for less" {
		t.Fatalf("a post whose statement runs too long: %v, want the statement timeout's 503", err)
	}

	if _, err := pool.Exec(ctx, `drop trigger slow_insert on public.conversation_turns`); err != nil {
		t.Fatal(err)
	}
	if err := post("4"); err != nil {
		t.Fatalf("a post once nothing holds it back: %v", err)
	}
	var turns int
	if err := pool.QueryRow(ctx, `select count(*) from public.conversation_turns where facilitator_id = $1::uuid`, facilitator).Scan(&turns); err != nil {
		t.Fatal(err)
	}
	if turns != 4 {
		t.Fatalf("%d turns stored, want 4: the refused posts stored nothing", turns)
	}
}

// A request's statements are never compiled by JIT: the planner's costs of
// a search of a long history pass JIT's thresholds, and compiling took
// longer than running. A trigger notes the setting a post's insert runs
// with, against the cluster's default.
func TestRequestsRunWithoutJITCompilation(t *testing.T) {
	pgtest.SkipOnCitus(t, "the noting trigger runs on a worker's shard, which cannot write the coordinator's table; "+
		"the workers get the setting as every other SET LOCAL of the request (citus.propagate_set_commands)")
	ctx, store, pool, _, learner := newLearnerStore(t)
	if on := apptest.Scalar[string](t, pool, `show jit`); on != "on" {
		t.Fatalf("the test cluster's jit is %q: the test needs Postgres's default, on", on)
	}
	for _, statement := range []string{
		`create table public.jit_seen (jit text)`,
		`create function public.note_jit() returns trigger language plpgsql security definer as $$
		begin insert into public.jit_seen values (current_setting('jit')); return new; end $$`,
		`create trigger note_jit before insert on public.conversation_turns
		for each row execute function public.note_jit()`,
	} {
		apptest.Exec(t, pool, statement)
	}
	mustAppend(t, ctx, store, &learner, []mentor.Turn{{Role: mentor.RoleUser, Content: "She finished the book."}})
	if seen := apptest.Scalar[string](t, pool, `select string_agg(distinct jit, ',') from public.jit_seen`); seen != "off" {
		t.Errorf("a post's insert ran with jit %q, want off", seen)
	}
}
