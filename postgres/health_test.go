package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// The health check answers while requests hold every connection of the
// pool, and comes back by itself when its own connection is broken.
func TestHealthHasAConnectionOfItsOwnAndReconnects(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	health := postgres.NewHealth(pool)
	t.Cleanup(health.Close)

	var held []*pgxpool.Conn
	// Given back before the pool closes, however the test ends.
	t.Cleanup(func() {
		for _, conn := range held {
			conn.Release()
		}
	})
	for range pool.Config().MaxConns {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, conn)
	}
	if err := health.Ping(ctx); err != nil {
		t.Fatalf("with the pool's %d connections held: %v", len(held), err)
	}
	first := health.ConnPID()

	var killed bool
	// The pid as an int: Citus adds a pg_terminate_backend of its own.
	if err := held[0].QueryRow(ctx, `select pg_terminate_backend($1::int)`, first).Scan(&killed); err != nil || !killed {
		t.Fatalf("could not end the health check's connection: %v", err)
	}
	if err := health.Ping(ctx); err != nil {
		t.Fatalf("after its connection was ended: %v, want a new connection", err)
	}
	if pid := health.ConnPID(); pid == 0 || pid == first {
		t.Fatalf("the health check kept connection %d, want a new one", pid)
	}
}
