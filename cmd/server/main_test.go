package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app"
	"mentormemory/app/apptest"
	"mentormemory/auth"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

const secret = "command-test-secret-at-least-32-chars!!"

func TestTokenCommand(t *testing.T) {
	var out bytes.Buffer
	getenv := func(k string) string {
		if k == "SUPABASE_JWT_SECRET" {
			return secret
		}
		return ""
	}
	sub := "0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11"
	if err := run(context.Background(), []string{"token", "--sub", sub, "--ttl", "2h"}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(context.Background(), auth.Config{JWTSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	caller, err := v.Verify(strings.TrimSpace(out.String()))
	if err != nil || caller.UserID != sub {
		t.Fatalf("minted token does not verify: %v %+v", err, caller)
	}

	noSecret := func(string) string { return "" }
	err = run(context.Background(), []string{"token", "--sub", sub}, noSecret, &out)
	if err == nil || !strings.Contains(err.Error(), "SUPABASE_JWT_SECRET is not set") {
		t.Fatalf("token without a secret: %v", err)
	}
}

func TestServeMigratesAndAnswers(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	databaseURL := pgtest.NewDatabase(t)
	// Ports of the test's own: the server migrates before it listens, and
	// a port chosen free among the ephemeral ones could be taken meanwhile.
	port := apptest.Port(t)
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", apptest.Port(t))
	env := map[string]string{
		"DATABASE_URL":        databaseURL,
		"SUPABASE_JWT_SECRET": secret,
		"PORT":                fmt.Sprint(port),
		"METRICS_ADDR":        metricsAddr,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var logs bytes.Buffer
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, &logs) }()

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var resp *http.Response
	var err error
	for range 100 {
		if resp, err = http.Get(base + "/healthz"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("server never answered: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	// Serving sets the garbage collector up for a long-running server, as
	// GOGC is not in its environment.
	if got := debug.SetGCPercent(100); got != app.ServerGCPercent {
		t.Errorf("the server runs with GC percent %d, want %d", got, app.ServerGCPercent)
	}
	resp, err = http.Get(base + "/api/conversation-memory")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unauthenticated request: %d", resp.StatusCode)
	}
	// The metrics are served on the operator's listener, not the public
	// port.
	for url, want := range map[string]int{"http://" + metricsAddr + "/metrics": http.StatusOK, base + "/metrics": http.StatusNotFound} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == http.StatusOK) != strings.Contains(string(page), `mentor_http_requests_total{method="GET",route="/healthz",status="200"}`) {
			t.Fatalf("GET %s: %d, want %d:\n%s", url, resp.StatusCode, want, page)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	var out bytes.Buffer
	if err := run(context.Background(), []string{"migrate"}, func(k string) string { return env[k] }, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "up to date") {
		t.Fatalf("second migration should have nothing to do: %s", out.String())
	}
}

// Migrating needs the database alone: no token settings, and a model
// setting it does not use may be wrong.
func TestMigrateChecksOnlyTheDatabaseSettings(t *testing.T) {
	env := map[string]string{"DATABASE_URL": pgtest.NewDatabase(t), "OPENAI_TIMEOUT": "soon"}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"migrate"}, func(k string) string { return env[k] }, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "database is up to date") {
		t.Fatalf("migrate output: %s", out.String())
	}
	err := run(context.Background(), []string{"migrate"}, func(string) string { return "" }, &out)
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL is required") {
		t.Fatalf("migrate without a database: %v", err)
	}
}

// migrate --citus migrates, then distributes the tables on a Citus
// coordinator; on a database without Citus it changes nothing, and the
// error says what to install. (Under PGTEST_CITUS_WORKERS the test
// database is on Citus and distributed already, so there is nothing to
// do.)
func TestMigrateCitusSaysWhatCitusNeeds(t *testing.T) {
	env := map[string]string{"DATABASE_URL": pgtest.NewDatabaseBuiltBy(t, func(context.Context, string) error { return nil })}
	var out bytes.Buffer
	if os.Getenv("PGTEST_CITUS_WORKERS") != "" {
		env["DATABASE_URL"] = pgtest.NewDatabase(t)
	}
	err := run(context.Background(), []string{"migrate", "--citus"}, func(k string) string { return env[k] }, &out)
	if os.Getenv("PGTEST_CITUS_WORKERS") != "" {
		if err != nil || !strings.Contains(out.String(), "nothing to do: the database is distributed already") {
			t.Fatalf("migrate --citus on a distributed database: %v\n%s", err, out.String())
		}
		return
	}
	if !errors.Is(err, postgres.ErrNoCitus) || !strings.Contains(err.Error(), "create extension citus") {
		t.Fatalf("migrate --citus without Citus: %v", err)
	}
	pool, err := pgxpool.New(context.Background(), env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var tables int
	if err := pool.QueryRow(context.Background(), `select count(*) from pg_tables where schemaname = 'public'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("migrate --citus without Citus left %d tables (%v), want none", tables, err)
	}
	if err := run(context.Background(), []string{"migrate", "--citus", "--emit-supabase", t.TempDir()}, func(k string) string { return env[k] }, &out); err == nil {
		t.Fatal("--citus with --emit-supabase should be refused")
	}
}

// The demo command creates the demo facilitator and learners, once however
// often it runs, and prints a token that signs in as that facilitator.
func TestDemoCreatesTheDemoFacilitatorAndPrintsItsToken(t *testing.T) {
	databaseURL := pgtest.NewDatabase(t)
	env := map[string]string{"DATABASE_URL": databaseURL, "SUPABASE_JWT_SECRET": secret}
	var out bytes.Buffer
	for range 2 {
		out.Reset()
		if err := run(context.Background(), []string{"demo"}, func(k string) string { return env[k] }, &out); err != nil {
			t.Fatal(err)
		}
	}
	var token string
	for _, line := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "export TOKEN='"); ok {
			token = strings.TrimSuffix(rest, "'")
		}
	}
	v, err := auth.NewVerifier(context.Background(), auth.Config{JWTSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if caller, err := v.Verify(token); err != nil || caller.UserID != app.DemoFacilitatorID {
		t.Fatalf("the printed token does not sign in as the demo facilitator: %v %+v\n%s", err, caller, out.String())
	}
	pool, err := pgxpool.New(context.Background(), databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var learners []string
	rows, _ := pool.Query(context.Background(), `select name from public.learners where facilitator_id = $1 order by name`, app.DemoFacilitatorID)
	if learners, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if strings.Join(learners, ",") != "Emma,Max" {
		t.Fatalf("demo learners %v, want Emma and Max once each", learners)
	}
}

func TestServeRefusesBadConfig(t *testing.T) {
	err := run(context.Background(), nil, func(k string) string {
		return map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_JWT_SECRET": secret, "PORT": "eighty"}[k]
	}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "PORT") {
		t.Fatalf("want an error naming PORT, got %v", err)
	}
}

// A port already in use fails the start before anything runs: no
// background worker left behind, no "serving" in the log.
func TestServeFailsOnATakenPortBeforeStartingWork(t *testing.T) {
	databaseURL := pgtest.NewDatabase(t)
	taken, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	env := map[string]string{
		"DATABASE_URL":        databaseURL,
		"SUPABASE_JWT_SECRET": secret,
		"PORT":                fmt.Sprint(taken.Addr().(*net.TCPAddr).Port),
	}
	var logs bytes.Buffer
	err = run(context.Background(), nil, func(k string) string { return env[k] }, &logs)
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("serving on a taken port: %v, want address already in use", err)
	}
	if strings.Contains(logs.String(), `"msg":"serving"`) {
		t.Fatalf("the server started its work before it had its port:\n%s", logs.String())
	}
}
