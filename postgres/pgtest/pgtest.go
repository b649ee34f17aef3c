// Package pgtest gives tests a real, freshly migrated Postgres database.
//
// DATABASE_URL names a server the tests may create databases on (the test
// script starts a private one). Without it the tests that need a database
// skip, except under CI=true, where they fail: CI must never pass by
// skipping.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/postgres"
)

// createLockKey serialises database creation and migration across test
// packages, which run in parallel and share the cluster-wide roles.
const createLockKey = 7_361_902_412

// URL returns the admin DATABASE_URL, or ends the test when there is none.
func URL(tb testing.TB) string {
	tb.Helper()
	adminURL := os.Getenv("DATABASE_URL")
	if adminURL == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("DATABASE_URL is not set: CI needs a database (run scripts/test.sh)")
		}
		tb.Skip("DATABASE_URL is not set; run scripts/test.sh to start a private database")
	}
	return adminURL
}

// NewDatabase creates an empty, migrated database for this test and drops
// it afterwards. It returns the database's URL.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	adminURL := URL(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		tb.Fatalf("connect to DATABASE_URL: %v", err)
	}
	defer admin.Close(ctx)

	name := "mentor_test_" + randomHex(6)
	if _, err := admin.Exec(ctx, `select pg_advisory_lock($1)`, int64(createLockKey)); err != nil {
		tb.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `create database `+name); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	dbURL, err := withDatabase(adminURL, name)
	if err != nil {
		tb.Fatal(err)
	}

	pool, err := postgres.Open(ctx, dbURL)
	if err != nil {
		tb.Fatalf("open test database: %v", err)
	}
	_, migrateErr := postgres.Migrate(ctx, pool)
	pool.Close()
	if _, err := admin.Exec(ctx, `select pg_advisory_unlock($1)`, int64(createLockKey)); err != nil {
		tb.Fatal(err)
	}
	if migrateErr != nil {
		tb.Fatalf("migrate: %v", migrateErr)
	}

	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		admin, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			tb.Logf("drop test database: %v", err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, `drop database if exists `+name+` with (force)`); err != nil {
			tb.Logf("drop test database: %v", err)
		}
	})
	return dbURL
}

// NewPool opens a pool on a fresh database and closes it after the test.
func NewPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool, err := postgres.Open(context.Background(), NewDatabase(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// withDatabase returns the connection string with its database replaced,
// for both the URL and the keyword/value forms.
func withDatabase(connString, name string) (string, error) {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err != nil {
			return "", err
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	return connString + " dbname=" + name, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
