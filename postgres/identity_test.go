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

// On plain Postgres a request's settings are made by set_config: SET LOCAL
// through public.set_local, which only Citus needs (it passes such settings
// on to its workers), cost each request about 25 µs more. With set_local
// made to fail, both paths still run as the caller.
func TestARequestsSettingsNeedNoSetLocalOnPlainPostgres(t *testing.T) {
	pgtest.SkipOnCitus(t, "Citus passes a request's settings on to its workers only as SET LOCAL, through public.set_local")
	pool := pgtest.NewPool(t)
	apptest.Exec(t, pool, `create or replace function public.set_local(p_name text, p_value text) returns text
		language plpgsql as $$ begin raise exception 'set_local called for %', p_name; end $$`)
	store := postgres.NewStore(pool, 50)
	id := apptest.NewUser(t, pool).ID
	write, read, err := store.Identity(asFacilitator(context.Background(), id))
	if err != nil {
		t.Fatal(err)
	}
	if want := [2]string{"memory_service", id}; write != want || read != want {
		t.Fatalf("write path runs as %v, read path as %v; want %v", write, read, want)
	}
}
