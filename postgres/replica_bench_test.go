package postgres_test

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
	"mentormemory/test/latency"
)

// BenchmarkSearchFromTheReplica times a search by words, one at a time, as
// the API runs it, answered by the primary and by the hot standby at
// TEST_DATABASE_REPLICA_URL, for a facilitator with 100 archived
// conversations of 10 turns and 3 going on, and reports the p50 and p99 of
// one search: what reading from the replica costs or saves a search when
// neither database is busy.
//
//	DATABASE_URL=... TEST_DATABASE_REPLICA_URL=... go test ./postgres -run '^$' -bench SearchFromTheReplica -benchtime 2000x
func BenchmarkSearchFromTheReplica(b *testing.B) {
	pool := pgtest.NewPool(b)
	dbURL := pool.Config().ConnString()
	replicaPool, err := postgres.Open(b.Context(), pgtest.OnStandby(b, dbURL, pgtest.StandbyURL(b)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(replicaPool.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	replica := postgres.NewReplica(pool, replicaPool, time.Minute, nil, log)
	b.Cleanup(replica.Close)
	store := postgres.NewStore(pool, 50)
	onPrimary := offlineService(store)
	onReplica := offlineService(store.WithReplica(replica))

	id := uuid.NewString()
	if _, err := pool.Exec(b.Context(), `insert into auth.users (id) values ($1::uuid)`, id); err != nil {
		b.Fatal(err)
	}
	ctx := asFacilitator(b.Context(), id)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 103 {
		for range 5 {
			posted := []mentor.Turn{{Role: mentor.RoleUser, Content: benchSentence(rng)},
				{Role: mentor.RoleAssistant, Content: benchSentence(rng)}}
			if _, err := onPrimary.Update(ctx, nil, posted, false); err != nil {
				b.Fatal(err)
			}
		}
		if i < 100 {
			if _, err := onPrimary.Clear(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := pool.Exec(b.Context(), `vacuum analyze`); err != nil {
		b.Fatal(err)
	}
	pgtest.WaitForReplay(b, dbURL, pgtest.OnStandby(b, dbURL, pgtest.StandbyURL(b)))

	for _, c := range []struct {
		name string
		svc  *mentor.Service
	}{{"primary", onPrimary}, {"replica", onReplica}} {
		b.Run(c.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				results, err := c.svc.Search(ctx, mentor.SearchQuery{Text: "bedtime routine with the tablet", IncludeArchive: true})
				if err != nil || len(results) == 0 {
					b.Fatalf("%d results, %v", len(results), err)
				}
				times = append(times, time.Since(start))
			}
			latency.Report(b, "search", times)
		})
	}
}
