// Command server runs the mentor's memory service.
//
//	server                          migrate, then serve on $PORT
//	server migrate                  apply migrations only
//	server migrate --citus          apply migrations, then distribute the tables
//	                                on a Citus coordinator (README "Running on Citus")
//	server migrate --emit-supabase DIR
//	                                write the migrations as Supabase CLI files
//	server token --sub UUID [--ttl 1h] [--email E]
//	                                mint a development token (HS256)
//	server simulate [--start T] [--record F] DIR
//	                                run transcripts through the memory pipeline
//	server demo [--ttl 24h]         create the demo facilitator and print a token
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app"
	"mentormemory/auth"
	"mentormemory/config"
	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/simulator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a graceful shutdown; from then on the signals
	// are Go's defaults again, so a second one ends the process at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run is the whole program, so tests can run it as it runs in production.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	command := "serve"
	if len(args) > 0 {
		command, args = args[0], args[1:]
	}
	switch command {
	case "serve":
		return serve(ctx, getenv, stdout)
	case "migrate":
		return migrate(ctx, args, getenv, stdout)
	case "token":
		return mintToken(args, getenv, stdout)
	case "simulate":
		return simulate(ctx, args, getenv, stdout)
	case "demo":
		return demo(ctx, args, getenv, stdout)
	default:
		return fmt.Errorf("unknown command %q (want serve, migrate, token, simulate or demo)", command)
	}
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	flags := flag.NewFlagSet("migrate", flag.ContinueOnError)
	emitTo := flags.String("emit-supabase", "", "write the migrations into this directory as Supabase CLI migrations, and apply nothing")
	citus := flags.Bool("citus", false, "after migrating, distribute the tables by facilitator on this Citus coordinator")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() != 0 || *emitTo != "" && *citus {
		return errors.New("usage: server migrate [--citus | --emit-supabase DIR]")
	}
	if *emitTo != "" {
		return emitSupabaseMigrations(*emitTo, stdout)
	}
	if *citus {
		return migrateOnCitus(ctx, getenv, stdout)
	}
	pool, err := migrated(ctx, getenv, stdout)
	if err == nil {
		pool.Close()
	}
	return err
}

// migrateOnCitus checks that the configured database is on a Citus
// coordinator, before it changes anything, then migrates it and
// distributes its tables (postgres.MigrateOnCitus), saying what it did.
func migrateOnCitus(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	db := config.Read(getenv).Database
	if err := db.Validate(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	pool, err := postgres.Open(ctx, db.URL)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer pool.Close()
	if err := postgres.CheckCitusCoordinator(ctx, pool); err != nil {
		return fmt.Errorf("distribute on Citus: %w", err)
	}
	applied, distributed, err := postgres.MigrateOnCitus(ctx, pool)
	for _, v := range applied {
		fmt.Fprintln(stdout, "applied migration", v)
	}
	for _, line := range distributed {
		fmt.Fprintln(stdout, line)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "database is up to date")
	}
	return distribute(ctx, pool, stdout)
}

// distribute distributes the migrated tables on a Citus coordinator and
// says what it did.
func distribute(ctx context.Context, pool *pgxpool.Pool, stdout io.Writer) error {
	done, err := postgres.Distribute(ctx, pool)
	if err != nil {
		return fmt.Errorf("distribute on Citus: %w", err)
	}
	for _, line := range done {
		fmt.Fprintln(stdout, line)
	}
	if len(done) == 0 {
		fmt.Fprintln(stdout, "nothing to do: the database is distributed already")
	}
	return nil
}

// emitSupabaseMigrations writes the files the Supabase CLI applies into dir,
// typically a project's supabase/migrations. Other files there, the team's
// own migrations, are left alone.
func emitSupabaseMigrations(dir string, stdout io.Writer) error {
	files, err := postgres.SupabaseMigrations()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		path := filepath.Join(dir, f.FileName)
		if err := os.WriteFile(path, []byte(f.SQL), 0o644); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "wrote", path)
	}
	return nil
}

// migrated connects to the configured database, which is all it checks of
// the configuration, and brings it up to date. The caller closes the pool.
func migrated(ctx context.Context, getenv func(string) string, stdout io.Writer) (*pgxpool.Pool, error) {
	db := config.Read(getenv).Database
	if err := db.Validate(); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	pool, err := postgres.Open(ctx, db.URL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	applied, err := postgres.Migrate(ctx, pool)
	for _, v := range applied {
		fmt.Fprintln(stdout, "applied migration", v)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "database is up to date")
	}
	return pool, nil
}

func serve(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(stdout, nil))
	app.TuneGC(getenv)
	app.LimitMemory(getenv, log)

	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	if _, err := postgres.Migrate(ctx, a.Pool); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}

	// Dev mode hands out tokens to anyone who asks, so it only listens on
	// this machine.
	host := ""
	if cfg.Auth.DevMode {
		host = "127.0.0.1"
	}
	srv := a.HTTPServer(net.JoinHostPort(host, strconv.Itoa(cfg.Web.Port)))
	// The port is taken before the worker starts, so a port in use fails
	// the start with nothing running.
	listener, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(listener) }()
	if cfg.Web.MetricsAddr != "" {
		metricsSrv := a.MetricsServer(cfg.Web.MetricsAddr)
		metricsListener, err := net.Listen("tcp", metricsSrv.Addr)
		if err != nil {
			srv.Close()
			return err
		}
		go func() { errc <- metricsSrv.Serve(metricsListener) }()
		defer metricsSrv.Close()
	}
	// The worker finishes its job before the pool closes, however serve
	// returns.
	stopWorker := a.StartWorker(ctx)
	defer stopWorker()
	log.Info("serving", "port", cfg.Web.Port, "summarizer", a.Service.SummarizerName())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Drain in-flight requests first: a post may wait for its summary for
	// the whole summary budget.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	log.Info("shutting down")
	return srv.Shutdown(shutdownCtx)
}

// shutdownGrace is how long SIGTERM waits for requests in flight: the
// summary budget, plus time for the post's own statements.
const shutdownGrace = mentor.SummaryBudget + 10*time.Second

func mintToken(args []string, getenv func(string) string, stdout io.Writer) error {
	flags := flag.NewFlagSet("token", flag.ContinueOnError)
	sub := flags.String("sub", "", "the facilitator's user id (uuid)")
	ttl := flags.Duration("ttl", time.Hour, "how long the token is valid")
	email := flags.String("email", "", "optional email claim")
	if err := flags.Parse(args); err != nil {
		return err
	}
	secret := getenv("SUPABASE_JWT_SECRET")
	if secret == "" {
		return errors.New("SUPABASE_JWT_SECRET is not set: cannot mint a token")
	}
	if *sub == "" {
		return errors.New("--sub UUID is required")
	}
	token, err := auth.MintHS256(secret, *sub, *email, *ttl)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, token)
	return err
}

// simulationStart is the default simulated start: a Thursday, so that with
// four days between sessions the third falls on a Friday.
const simulationStart = "2026-11-12T16:00:00Z"

// simulate runs the transcripts of a directory through the whole memory
// pipeline on DATABASE_URL (migrated first), as a facilitator created for
// the run, and prints the log. With a model key the model extracts; without
// one the recorded extractions are replayed.
func simulate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	flags := flag.NewFlagSet("simulate", flag.ContinueOnError)
	start := flags.String("start", simulationStart, "simulated time of the first session (RFC 3339)")
	record := flags.String("record", "", "write the model's extractions to this file, as a fixture to replay")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() != 1 {
		return errors.New("usage: server simulate [--start 2026-11-12T16:00:00Z] [--record FILE] DIR")
	}
	startAt, err := time.Parse(time.RFC3339, *start)
	if err != nil {
		return fmt.Errorf("--start: %w", err)
	}
	// The simulation needs the database, the model and the limits; it
	// verifies no tokens, so the auth settings are not checked.
	cfg := config.Read(getenv)
	if err := errors.Join(cfg.Model.Validate(), cfg.Limits.Validate()); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	pool, err := migrated(ctx, getenv, io.Discard)
	if err != nil {
		return err
	}
	defer pool.Close()
	return simulator.Simulate(ctx, cfg, pool, flags.Arg(0), simulator.Setup{Start: startAt, Out: stdout, RecordTo: *record})
}

// demo creates the demo facilitator dana@example.com with learners Emma and
// Max (app.SeedDemo) on the configured database, migrated first, and prints
// a token for them with examples of the API.
func demo(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	flags := flag.NewFlagSet("demo", flag.ContinueOnError)
	ttl := flags.Duration("ttl", app.DemoTokenTTL, "how long the printed token is valid")
	if err := flags.Parse(args); err != nil {
		return err
	}
	secret := getenv("SUPABASE_JWT_SECRET")
	if secret == "" {
		return errors.New("SUPABASE_JWT_SECRET is not set: cannot mint the demo token")
	}
	pool, err := migrated(ctx, getenv, io.Discard)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := app.SeedDemo(ctx, pool); err != nil {
		return fmt.Errorf("create the demo facilitator: %w", err)
	}
	token, err := auth.MintHS256(secret, app.DemoFacilitatorID, app.DemoFacilitatorEmail, *ttl)
	if err != nil {
		return err
	}
	url := "http://localhost:" + cmp.Or(getenv("PORT"), "8080") + "/api/conversation-memory"
	_, err = fmt.Fprintf(stdout, demoUsage, app.DemoFacilitatorEmail, app.DemoFacilitatorID, app.DemoEmmaID, app.DemoMaxID,
		*ttl, token, url, app.DemoEmmaID, url, app.DemoEmmaID)
	return err
}

const demoUsage = `
Demo facilitator %s (%s), learners Emma (%s) and Max (%s).
Token (%v):

export TOKEN='%s'

Store two turns about Emma:

curl -sS -X POST '%s' \
  -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"learner_id":"%s","conversation_turns":[{"role":"user","content":"Emma got stuck on fractions again today."},{"role":"assistant","content":"Try cutting a pizza into halves, then quarters, and let her name the pieces."}]}'

Read Emma's conversation memory:

curl -sS '%s?learner_id=%s' -H "Authorization: Bearer $TOKEN"

`
