package postgres_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
	"mentormemory/summarizer"
)

// newLearnerDatabase is a fresh database with a facilitator and one learner
// of theirs (seedLearner).
func newLearnerDatabase(t *testing.T) (pool *pgxpool.Pool, facilitator, learner string) {
	pool = pgtest.NewPool(t)
	facilitator, learner = seedLearner(t, pool)
	return pool, facilitator, learner
}

// newLearnerStore is newLearnerDatabase with what most tests act through:
// a store over it that archives every 50 turns, as the service's does, and
// ctx carrying the facilitator as the caller.
func newLearnerStore(t *testing.T) (ctx context.Context, store *postgres.Store, pool *pgxpool.Pool, facilitator, learner string) {
	t.Helper()
	pool, facilitator, learner = newLearnerDatabase(t)
	return asFacilitator(context.Background(), facilitator), postgres.NewStore(pool, 50), pool, facilitator, learner
}

// mustAppend stores turns in the learner's conversation (nil: the general
// conversation) as a post does, and ends the test when the store refuses.
func mustAppend(t testing.TB, ctx context.Context, store *postgres.Store, learnerID *string, turns []mentor.Turn) mentor.Appended {
	t.Helper()
	out, err := store.AppendTurns(ctx, mentor.AppendRequest{LearnerID: learnerID, Turns: turns})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// offlineService is the service the API runs over store, with the offline
// summarizer in place of a model, and its logs discarded.
func offlineService(store mentor.Store) *mentor.Service {
	return mentor.NewService(store, summarizer.NewOffline(), slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// readingExchange is the nth of a run of alike exchanges about what the
// learner read, each turn with a client id of its own.
func readingExchange(n string) []mentor.Turn {
	return []mentor.Turn{
		{Role: mentor.RoleUser, Content: "What did she read today? " + n, ID: "u" + n},
		{Role: mentor.RoleAssistant, Content: "Two chapters of her book. " + n, ID: "a" + n},
	}
}

// seedLearner adds a facilitator and one learner of theirs named Ada, as the
// database's owner, and returns their ids.
func seedLearner(t *testing.T, pool *pgxpool.Pool) (facilitator, learner string) {
	t.Helper()
	facilitator, learner = uuid.NewString(), uuid.NewString()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `insert into auth.users (id) values ($1::uuid)`, facilitator); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `insert into public.learners (id, facilitator_id, name) values ($1::uuid, $2::uuid, 'Ada')`,
		learner, facilitator); err != nil {
		t.Fatal(err)
	}
	return facilitator, learner
}

// asFacilitator returns ctx carrying the facilitator as the verified caller,
// with the claims a Supabase access token of theirs would have.
func asFacilitator(ctx context.Context, id string) context.Context {
	claims, _ := json.Marshal(map[string]string{"sub": id, "role": "authenticated", "aud": "authenticated"})
	return mentor.WithCaller(ctx, mentor.Caller{UserID: id, Claims: claims})
}

// lockWaits counts the sessions of the test's database waiting for a
// lock (pgtest.LockWaitsSQL).
func lockWaits(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var waiting int
	if err := pool.QueryRow(context.Background(), pgtest.LockWaitsSQL()).Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	return waiting
}
