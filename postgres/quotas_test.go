package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
	"mentormemory/postgres"
)

// Counting costs no round trip: a post with its request's charge and its
// turns' still makes five, a read one, a new learner three, as without
// limits; and each was counted.
func TestQuotasCostNoRoundTrip(t *testing.T) {
	pool, counter := countedPool(t)
	facilitator, learner := seedLearner(t, pool)
	limits := mentor.Limits{ReadsPerMinute: 100, WritesPerMinute: 100, TurnsPerDay: 100, LearnersPerDay: 100}
	store := postgres.NewStore(pool, 50).WithLimits(limits)
	request := func(kind mentor.Counter) context.Context {
		charge, _ := limits.Charge(kind, 1)
		return mentor.WithRequestCharge(asFacilitator(context.Background(), facilitator), charge)
	}
	post := func(n string) {
		t.Helper()
		mustAppend(t, request(mentor.WriteRequests), store, &learner, []mentor.Turn{
			{Role: mentor.RoleUser, Content: "How is the reading going? " + n, ID: "u" + n},
			{Role: mentor.RoleAssistant, Content: "Ada read two chapters. " + n, ID: "a" + n},
		})
	}
	roundTrips := func(what string, want int64, do func() error) {
		t.Helper()
		counter.n.Store(0)
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := counter.n.Load(); got != want {
			t.Errorf("%s made %d round trips, want %d", what, got, want)
		}
	}

	post("1") // creates the record and the session
	roundTrips("a post", 5, func() error { post("2"); return nil })
	roundTrips("a read", 1, func() error {
		_, err := store.GetConversation(request(mentor.ReadRequests), &learner)
		return err
	})
	roundTrips("a new learner", 3, func() error {
		_, err := store.CreateLearner(request(mentor.WriteRequests), "Grace")
		return err
	})

	want := map[mentor.Counter]int64{mentor.WriteRequests: 3, mentor.ReadRequests: 1, mentor.TurnsStored: 4, mentor.LearnersAdded: 1}
	for kind, n := range want {
		if got := apptest.Used(t, pool, facilitator, kind); got != n {
			t.Errorf("%s counted %d, want %d", kind, got, n)
		}
	}
}

// A request that fails after its charge went with its rolled-back
// transaction is counted all the same: failing requests cost the database
// too. A refused one is not.
func TestFailedRequestsCountRefusedOnesDoNot(t *testing.T) {
	pool, _ := countedPool(t)
	facilitator, learner := seedLearner(t, pool)
	limits := mentor.Limits{WritesPerMinute: 3, TurnsPerDay: 2}
	store := postgres.NewStore(pool, 50).WithLimits(limits)
	write := func() context.Context {
		charge, _ := limits.Charge(mentor.WriteRequests, 1)
		return mentor.WithRequestCharge(asFacilitator(context.Background(), facilitator), charge)
	}

	missing := uuid.NewString()
	if _, err := store.ClearConversation(write(), &missing); mentor.ErrorCode(err) != mentor.CodeNotFound {
		t.Fatalf("clearing another's learner: %v, want not found", err)
	}
	if got := apptest.Used(t, pool, facilitator, mentor.WriteRequests); got != 1 {
		t.Fatalf("a failed write counted %d, want 1", got)
	}

	exchange := mentor.AppendRequest{LearnerID: &learner, Turns: []mentor.Turn{
		{Role: mentor.RoleUser, Content: "Three turns are one too many."},
		{Role: mentor.RoleAssistant, Content: "The day allows two."},
		{Role: mentor.RoleUser, Content: "So this one is refused, and the two with it."},
	}}
	_, err := store.AppendTurns(write(), exchange)
	if mentor.ErrorCode(err) != mentor.CodeRateLimited {
		t.Fatalf("three turns against a day's two: %v, want rate limited", err)
	}
	if wait := mentor.RetryAfter(err); wait <= 0 || wait > 24*time.Hour {
		t.Errorf("Retry-After %v, want the rest of the day", wait)
	}
	if n := apptest.Count(t, pool, `select count(*) from public.conversation_turns where facilitator_id = $1::uuid`, facilitator); n != 0 {
		t.Errorf("a refused post stored %d turns", n)
	}
	if got := apptest.Used(t, pool, facilitator, mentor.WriteRequests); got != 1 {
		t.Errorf("a refused write counted: %d writes, want 1", got)
	}
	if got := apptest.Used(t, pool, facilitator, mentor.TurnsStored); got != 0 {
		t.Errorf("a refused post counted %d turns", got)
	}
}
