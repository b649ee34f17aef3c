package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// roundTrips counts the requests the app sends Postgres and waits on: a
// statement on its own (begin and commit included) or a batch of them.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// A post to a conversation that exists, with a live session, makes five
// round trips: begin with the caller's settings, the reads and locks, the
// writes and the summary's turns, the record's update, commit. Each one
// more is a network round trip on every post when the database is remote.
// (Begin went in a round trip of its own until it had to be sent as a
// statement of the batch anyway: on Citus the settings reach the worker
// nodes only within a transaction block.)
func TestPostMakesFiveRoundTrips(t *testing.T) {
	ctx := context.Background()
	pool, counter := countedPool(t)
	facilitator, learner := seedLearner(t, pool)
	ctx = asFacilitator(ctx, facilitator)
	store := postgres.NewStore(pool, 50)
	post := func(n string) mentor.Appended {
		t.Helper()
		return mustAppend(t, ctx, store, &learner, []mentor.Turn{
			{Role: mentor.RoleUser, Content: "How is the reading going? " + n, ID: "u" + n},
			{Role: mentor.RoleAssistant, Content: "Ada read two chapters. " + n, ID: "a" + n},
		})
	}
	post("1") // creates the record and the session

	counter.n.Store(0)
	if out := post("2"); out.Added != 2 || out.Job == nil {
		t.Fatalf("the second post stored %d turns (summary job %v), want 2 and a job", out.Added, out.Job)
	}
	if got := counter.n.Load(); got != 5 {
		t.Fatalf("a post made %d round trips, want 5", got)
	}
}

// countedPool is a pool on a fresh database, as the app opens it, whose
// round trips are counted.
func countedPool(t *testing.T) (*pgxpool.Pool, *roundTrips) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	counter := &roundTrips{}
	cfg.ConnConfig.Tracer = counter
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, counter
}
