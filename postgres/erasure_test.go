package postgres_test

import (
	"errors"
	"testing"
	"time"

	"mentormemory/mentor"
)

// A post about a learner whose erasure is in progress (on another server:
// within one, posts and the erasure of a learner take turns before the
// database) waits for the erasure, then answers that the learner is not
// found: not a 500, and no turn left behind.
func TestPostWaitingOnAnErasureFindsNoLearner(t *testing.T) {
	ctx, store, pool, facilitator, learner := newLearnerStore(t)

	// The erasure, held open: the learner is locked and deleted but not
	// committed, so the post still finds it, then waits for its lock.
	erasure, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer erasure.Rollback(ctx)
	if _, err := erasure.Exec(ctx, `select set_config('role', 'memory_service', true),
		public.set_local('request.jwt.claims', json_build_object('sub', $1::text, 'role', 'authenticated')::text)`, facilitator); err != nil {
		t.Fatal(err)
	}
	if _, err := erasure.Exec(ctx, `select public.erase('learner', $1::uuid)`, learner); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := store.AppendTurns(ctx, mentor.AppendRequest{LearnerID: &learner, Turns: []mentor.Turn{
			{Role: mentor.RoleUser, Content: "Ada finished her book."}, {Role: mentor.RoleAssistant, Content: "Wonderful."}}})
		done <- err
	}()
	for lockWaits(t, pool) == 0 {
		select {
		case err := <-done:
			t.Fatalf("the post did not wait for the erasure: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := erasure.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	var memErr *mentor.Error
	if err := <-done; !errors.As(err, &memErr) || memErr.Code != mentor.CodeNotFound || memErr.Message != "Learner not found" {
		t.Fatalf("the post after the erasure: %v, want Learner not found", err)
	}
	var left int
	if err := pool.QueryRow(ctx, `select (select count(*) from public.conversation_turns where learner_id = $1::uuid)
		+ (select count(*) from public.conversation_updates where learner_id = $1::uuid)`, learner).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d rows of the erased learner after the post (%v)", left, err)
	}
}
