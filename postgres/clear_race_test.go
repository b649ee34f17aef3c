package postgres_test

import (
	"testing"
	"time"

	"mentormemory/mentor"
)

// A post that meets a clear in progress waits for it, then stores its turns
// in a new conversation: it neither fails nor writes into the cleared one.
func TestPostWaitingOnAClearStartsANewConversation(t *testing.T) {
	ctx, store, pool, _, learner := newLearnerStore(t)
	first := mustAppend(t, ctx, store, &learner, readingExchange("1"))

	// The clear, held open: the record is deleted (and archived) but not
	// committed, so the post finds the record, then waits for its lock.
	clear, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer clear.Rollback(ctx)
	if _, err := clear.Exec(ctx, `delete from public.conversation_updates where id = $1::uuid`, first.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	type posted struct {
		out mentor.Appended
		err error
	}
	done := make(chan posted, 1)
	go func() {
		out, err := store.AppendTurns(ctx, mentor.AppendRequest{LearnerID: new(string(learner)), Turns: readingExchange("2")})
		done <- posted{out, err}
	}()
	for lockWaits(t, pool) == 0 {
		select {
		case p := <-done:
			t.Fatalf("the post did not wait for the clear: %+v, %v", p.out, p.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := clear.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	p := <-done
	if p.err != nil {
		t.Fatalf("the post after the clear failed: %v", p.err)
	}
	if p.out.Added != 2 || p.out.Conversation.TurnCount != 2 || p.out.Conversation.ID == first.Conversation.ID {
		t.Fatalf("after the clear the post stored %d turns in conversation %s with %d turns; want 2 in a new one (not %s)",
			p.out.Added, p.out.Conversation.ID, p.out.Conversation.TurnCount, first.Conversation.ID)
	}
}
