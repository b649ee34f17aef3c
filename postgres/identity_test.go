package postgres_test

import (
	"context"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// Isolation must come from RLS, not from the service's login role (a
// superuser here): every statement of both paths runs as memory_service
// (authenticated's row-level policies and the service's writes) with the
// caller's claims.
func TestStatementsRunAsTheCaller(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.NewStore(pool, 50)
	id := apptest.NewUser(t, pool).ID
	ctx := asFacilitator(context.Background(), id)
	write, read, err := store.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := [2]string{"memory_service", id}
	if write != want || read != want {
		t.Fatalf("write path runs as %v, read path as %v; want %v", write, read, want)
	}
	if _, _, err := store.Identity(context.Background()); mentor.ErrorCode(err) != mentor.CodeUnauthenticated {
		t.Fatalf("no caller: %v", err)
	}
}
