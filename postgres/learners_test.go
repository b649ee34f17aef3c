package postgres_test

import (
	"context"
	"testing"

	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// A learner's new name is stored and listed; another facilitator's learner
// cannot be renamed, found or changed, as if it did not exist.
func TestRenamingALearnerChangesOnlyTheCallersOwn(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.NewStore(pool, 50)
	owner, learner := seedLearner(t, pool)
	other, _ := seedLearner(t, pool)
	ctx := context.Background()

	renamed, err := store.RenameLearner(asFacilitator(ctx, owner), learner, "Ada Lovelace")
	if err != nil {
		t.Fatal(err)
	}
	if renamed.ID != learner || renamed.Name != "Ada Lovelace" {
		t.Fatalf("renamed: %+v", renamed)
	}
	listed, err := store.ListLearners(asFacilitator(ctx, owner))
	if err != nil || len(listed) != 1 || listed[0].Name != "Ada Lovelace" {
		t.Fatalf("listed after renaming: %+v, %v", listed, err)
	}

	_, err = store.RenameLearner(asFacilitator(ctx, other), learner, "Taken over")
	if mentor.ErrorCode(err) != mentor.CodeNotFound {
		t.Fatalf("another facilitator renaming the learner: %v, want not found", err)
	}
	var name string
	if err := pool.QueryRow(ctx, `select name from public.learners where id = $1::uuid`, learner).Scan(&name); err != nil || name != "Ada Lovelace" {
		t.Fatalf("the learner is named %q after another facilitator's attempt (%v)", name, err)
	}
}
