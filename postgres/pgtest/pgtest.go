// Package pgtest gives tests a real, freshly migrated Postgres database.
//
// DATABASE_URL names a server the tests may create databases on (the test
// script starts a private one), and TEST_DATABASE_REPLICA_URL a hot standby
// of it (the script starts one too). Without them the tests that need them
// skip, except under CI=true, where they fail: CI must never pass by
// skipping.
//
// On Citus: with PGTEST_CITUS_WORKERS set to the worker nodes of the
// coordinator DATABASE_URL names (host:port, comma-separated, reached
// with DATABASE_URL's user and password), each test database is created
// on every node with the citus extension, the workers are added to it,
// and NewDatabase's is migrated and distributed, as `server migrate
// --citus` does (with 4 shards a table, which a test's few rows need, not
// Citus's 32): a copy of a template built so once per test process
// (citus.go). README "Running on Citus" has the commands.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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
	return serverURL(tb, "DATABASE_URL", "a database", "a private database")
}

// serverURL returns the environment variable that names a server, or ends
// the test when it is not set: under CI=true it fails, since CI must never
// pass by skipping, and elsewhere it skips. ciNeeds says what CI lacks,
// and started what scripts/test.sh would start.
func serverURL(tb testing.TB, variable, ciNeeds, started string) string {
	tb.Helper()
	value := os.Getenv(variable)
	if value == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not set: CI needs %s (run scripts/test.sh)", variable, ciNeeds)
		}
		tb.Skipf("%s is not set; run scripts/test.sh to start %s", variable, started)
	}
	return value
}

// StandbyURL returns TEST_DATABASE_REPLICA_URL, a streaming hot standby of
// the server at DATABASE_URL (scripts/test.sh starts one), or ends the test
// as URL does when there is none. Test packages share it, in parallel: a
// test reads from it and never stops or pauses it; one that must, makes a
// standby of its own (test/faults does).
func StandbyURL(tb testing.TB) string {
	tb.Helper()
	URL(tb)
	// The service's replica is a hot standby of its one database, read
	// once it has replayed the caller's last write there. A Citus
	// coordinator's standby holds no shard, and its WAL none of their
	// writes, so it cannot tell that.
	SkipOnCitus(tb, "a read replica is a standby of one Postgres; a Citus coordinator's holds no shard")
	return serverURL(tb, "TEST_DATABASE_REPLICA_URL", "a hot standby of DATABASE_URL", "a private database with a hot standby")
}

// OnStandby returns the URL of the database dbURL names, on the standby at
// standbyURL.
func OnStandby(tb testing.TB, dbURL, standbyURL string) string {
	tb.Helper()
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	onStandby, err := withDatabase(standbyURL, cfg.Database)
	if err != nil {
		tb.Fatal(err)
	}
	return onStandby
}

// WaitForReplay waits until the standby at standbyURL has replayed all the
// primary at primaryURL had committed, and begun to write, when it was
// called; it fails the test after a minute. It commits a transaction there
// that writes a message to the WAL and nothing else: its commit flushes
// the WAL past every record begun before, so the position it waits for,
// the flushed one, is past the one the service notes after a write (the
// primary's insert position then), and is one the standby can reach.
func WaitForReplay(tb testing.TB, primaryURL, standbyURL string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var message, written string
	err := queryRow(ctx, primaryURL, `select pg_logical_emit_message(true, 'pgtest', 'wait for replay')::text`, &message)
	if err == nil {
		err = queryRow(ctx, primaryURL, `select pg_current_wal_flush_lsn()::text`, &written)
	}
	if err != nil {
		tb.Fatalf("the primary's WAL position: %v", err)
	}
	for {
		var replayed bool
		err := queryRow(ctx, standbyURL, `select coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)`, &replayed, written)
		if err == nil && replayed {
			return
		}
		if ctx.Err() != nil {
			tb.Fatalf("the standby has not replayed the primary's WAL up to %s after a minute (last error: %v)", written, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// queryRow reads one row of sql over a connection of its own.
func queryRow(ctx context.Context, databaseURL, sql string, into any, args ...any) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return conn.QueryRow(ctx, sql, args...).Scan(into)
}

// buildOn opens a pool on the database at dbURL and runs steps with it in
// order: postgres.Migrate, postgres.Distribute, as `server migrate` does.
func buildOn(ctx context.Context, dbURL string, steps ...func(context.Context, *pgxpool.Pool) ([]string, error)) error {
	pool, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	for _, step := range steps {
		if _, err := step(ctx, pool); err != nil {
			return err
		}
	}
	return nil
}

// NewDatabase creates an empty, migrated database for this test and drops
// it afterwards. It returns the database's URL. On Citus it is distributed
// too, as `server migrate --citus` does, and copied from a template
// (newCitusDatabase).
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	if OnCitus() {
		return newDatabase(tb, newCitusDatabase)
	}
	return NewDatabaseBuiltBy(tb, func(ctx context.Context, dbURL string) error {
		return buildOn(ctx, dbURL, postgres.Migrate)
	})
}

// NewDatabaseBuiltBy creates an empty database for this test, has build
// fill it, and drops it afterwards. It returns the database's URL. Builds
// run one at a time across test packages, as they create the same
// cluster-wide roles. On Citus the database is on every node, and the
// coordinator knows its workers, before build runs.
func NewDatabaseBuiltBy(tb testing.TB, build func(ctx context.Context, dbURL string) error) string {
	tb.Helper()
	return newDatabase(tb, func(ctx context.Context, adminURL, dbURL, name string) error {
		if err := execOn(ctx, adminURL, `create database `+name); err != nil {
			return err
		}
		if err := addCitusNodes(ctx, adminURL, dbURL, name, citusWorkers()); err != nil {
			return err
		}
		return build(ctx, dbURL)
	})
}

// newDatabase has create make the database name for this test, one
// creation at a time across test packages, and drops it afterwards, from
// every node. It returns the database's URL.
func newDatabase(tb testing.TB, create func(ctx context.Context, adminURL, dbURL, name string) error) string {
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
	dbURL, err := withDatabase(adminURL, name)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `select pg_advisory_lock($1)`, int64(createLockKey)); err != nil {
		tb.Fatal(err)
	}
	// Dropped even when the build fails, from the workers too.
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := dropDatabases(ctx, adminURL, name); err != nil {
			tb.Logf("drop test database: %v", err)
		}
	})

	createErr := create(ctx, adminURL, dbURL, name)
	if _, err := admin.Exec(ctx, `select pg_advisory_unlock($1)`, int64(createLockKey)); err != nil {
		tb.Fatal(err)
	}
	if createErr != nil {
		tb.Fatalf("build the test database: %v", createErr)
	}
	return dbURL
}

// Binary returns the path of a PostgreSQL client program (psql, pg_dump),
// or ends the test when there is none, as URL does. It looks where
// scripts/lib/postgres.sh finds the private cluster's: $PG_BIN, then the
// newest /usr/lib/postgresql/<version>/bin (Debian keeps them off PATH,
// and pg_dump must be as new as the server), then PATH.
func Binary(tb testing.TB, name string) string {
	tb.Helper()
	dirs := []string{os.Getenv("PG_BIN")}
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(versions, func(a, b string) int { return majorVersion(b) - majorVersion(a) })
	dirs = append(dirs, versions...)
	for _, dir := range dirs {
		path := filepath.Join(dir, name)
		if info, err := os.Stat(path); dir != "" && err == nil && info.Mode()&0o111 != 0 {
			return path
		}
	}
	if path, err := exec.LookPath(name); err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s not found: CI needs the PostgreSQL client programs (run scripts/test.sh)", name)
	}
	tb.Skipf("%s not found; run scripts/test.sh to install PostgreSQL", name)
	return ""
}

// majorVersion is the <version> of /usr/lib/postgresql/<version>/bin.
func majorVersion(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
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
