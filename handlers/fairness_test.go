package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/postgres/pgtest"
)

// One facilitator's burst of posts cannot take the service from another.
// The test holds the lock of the burster's conversations, so each of their
// posts that reaches the database waits there holding a connection, as
// posts did when each stored 2 MB; the pool has 4. The burst goes to four
// conversations; at most config.DefaultPerFacilitator of its posts may
// reach the database (fewer when the facilitator's share of bytes in
// flight or a conversation's turn holds them back first); the other posts
// are refused with a 503, and the other facilitator's reads and the health
// check are answered. (Before, the burst held every connection: the reads
// waited, then answered 503, and so did /healthz.)
func TestOneFacilitatorsBurstLeavesOthersServed(t *testing.T) {
	// The posts that reach the database wait there until the test lets
	// them go, which must not end them: under the race detector the other
	// facilitator's read, answered while they wait, took up to 2.4 s, and
	// with the time they waited before it they passed the 3 s a post waits
	// for a row in a deployment.
	svc := apptest.Start(t, apptest.Options{TxTimeout: 2 * time.Minute, LockTimeout: time.Minute})
	burster, other := svc.NewUser(t), svc.NewUser(t)
	svc.NewLearner(t, other, "Emma")
	conversations := []string{"", svc.NewLearner(t, burster, "Max"), svc.NewLearner(t, burster, "Ada"), svc.NewLearner(t, burster, "Sam")}
	for _, learner := range conversations {
		svc.PostTurns(t, burster, learner, apptest.Exchange("They read two pages alone.", "Ask what happens next.")...).WantStatus(http.StatusOK)
	}

	// Deferred in this order, the lock is let go before the burst is waited
	// for, however the test ends.
	var burst sync.WaitGroup
	defer burst.Wait()
	ctx := context.Background()
	lock, err := svc.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx)
	if _, err := lock.Exec(ctx, `select 1 from conversation_updates where facilitator_id = $1::uuid for update`, burster.ID); err != nil {
		t.Fatal(err)
	}

	// Each post is about 2 MB: an exchange, then white space, which JSON
	// allows after the object. What the service holds for a post in flight
	// is its body, whatever the body says. Each post's turns have ids of
	// their own, so that every post let in adds its two turns: a post that
	// repeated another's ids would be answered 200 and store nothing.
	const posts = 48
	bodies := make([]string, posts)
	for i := range posts {
		exchange := apptest.Exchange("They read three pages alone today.", "Let them pick the next book.")
		exchange[0].ID, exchange[1].ID = fmt.Sprintf("burst-q-%d", i), fmt.Sprintf("burst-a-%d", i)
		encoded, err := json.Marshal(apptest.ConversationBody(conversations[i%len(conversations)], exchange))
		if err != nil {
			t.Fatal(err)
		}
		bodies[i] = string(encoded) + strings.Repeat(" ", 2_000_000)
	}

	answers := make(chan apptest.Response, posts)
	for _, body := range bodies {
		burst.Go(func() { answers <- svc.Call(t, burster.Token, http.MethodPost, "/api/conversation-memory", body) })
	}
	// next is the next answer of the burst. The bound only keeps a broken
	// service from hanging the test: it used to leave posts waiting on the
	// lock past their transaction's timeout.
	next := func() apptest.Response {
		t.Helper()
		select {
		case r := <-answers:
			return r
		case <-time.After(time.Minute):
			t.Fatal("a post of the burst got no answer")
			return apptest.Response{}
		}
	}

	// The posts let in reach the lock and wait there: no more than the
	// facilitator's share of the database, whichever of the limits on the
	// way (bytes in flight, the conversation's turn, the database's slots)
	// held the others back. The others are refused meanwhile; they are
	// counted below, so that the posts waiting in the database are let go
	// well within their lock timeout, however slow the machine.
	waiting := 0
	for range 1000 {
		if waiting = svc.Count(t, pgtest.LockWaitsSQL()); waiting > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if waiting < 1 || waiting > config.DefaultPerFacilitator {
		t.Fatalf("%d of the burster's posts wait in the database, want 1 to %d", waiting, config.DefaultPerFacilitator)
	}

	// One read and one health check, answered while the posts wait in the
	// database (three of each once took longer than a deployment's lock
	// timeout under the race detector, hence the test's longer one).
	svc.Call(t, other.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
	svc.Call(t, "", http.MethodGet, "/healthz", nil).WantStatus(http.StatusOK)

	if err := lock.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// The posts let in are stored; every other post was refused.
	stored := 0
	for range posts {
		switch r := next(); {
		case r.Status == http.StatusOK:
			stored++
		case r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "":
			t.Fatalf("a post of the burst answered %s, want 200 or 503 with Retry-After", r)
		}
	}
	if stored < waiting || stored > config.DefaultPerFacilitator {
		t.Fatalf("%d posts of the burst stored, want those let in: %d to %d", stored, waiting, config.DefaultPerFacilitator)
	}
	turns := 2*len(conversations) + 2*stored
	if n := svc.Count(t, `select count(*) from conversation_turns where facilitator_id = $1::uuid`, burster.ID); n != turns {
		t.Fatalf("the burster has %d turns stored, want %d: each conversation's first exchange, and the burst's where a post was let in", n, turns)
	}
}
