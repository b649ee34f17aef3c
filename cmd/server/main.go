// Command server runs the mentor's memory service.
//
//	server                          migrate, then serve on $PORT
//	server migrate                  apply migrations only
//	server token --sub UUID [--ttl 1h] [--email E]
//	                                mint a development token (HS256)
//	server simulate [--start T] DIR run transcripts through the memory pipeline
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"mentormemory/app"
	"mentormemory/auth"
	"mentormemory/config"
	"mentormemory/memory"
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
		return migrate(ctx, getenv, stdout)
	case "token":
		return mintToken(args, getenv, stdout)
	case "simulate":
		return simulate(ctx, args, getenv, stdout)
	default:
		return fmt.Errorf("unknown command %q (want serve, migrate, token or simulate)", command)
	}
}

func migrate(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	databaseURL := getenv("DATABASE_URL")
	if databaseURL == "" {
		return errors.New("DATABASE_URL is required")
	}
	pool, err := postgres.Open(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer pool.Close()
	applied, err := postgres.Migrate(ctx, pool)
	for _, v := range applied {
		fmt.Fprintln(stdout, "applied migration", v)
	}
	if err == nil && len(applied) == 0 {
		fmt.Fprintln(stdout, "database is up to date")
	}
	return err
}

func serve(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(stdout, nil))
	app.TuneGC(getenv)

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
	if cfg.DevMode {
		host = "127.0.0.1"
	}
	srv := &http.Server{
		Addr:              net.JoinHostPort(host, strconv.Itoa(cfg.Port)),
		Handler:           a.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      90 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	// The port is taken before the worker starts, so a port in use fails
	// the start with nothing running.
	listener, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(listener) }()
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	workDone := make(chan struct{})
	go func() {
		defer close(workDone)
		a.Worker.Run(workCtx)
	}()
	// The worker finishes its job before the pool closes, however serve
	// returns. Queued jobs wait in the database for the next start.
	defer func() {
		stopWork()
		<-workDone
	}()
	log.Info("serving", "port", cfg.Port, "summarizer", app.NewSummarizer(cfg).Name())

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
const shutdownGrace = memory.SummaryBudget + 10*time.Second

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
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() != 1 {
		return errors.New("usage: server simulate [--start 2026-11-12T16:00:00Z] DIR")
	}
	startAt, err := time.Parse(time.RFC3339, *start)
	if err != nil {
		return fmt.Errorf("--start: %w", err)
	}
	// The simulation verifies no tokens, so it needs no JWT settings; a
	// placeholder satisfies the check that a server needs them.
	cfg, err := config.FromEnv(func(name string) string {
		if name == "SUPABASE_JWT_SECRET" && getenv(name) == "" && getenv("SUPABASE_URL") == "" {
			return "simulation-needs-no-token-verification"
		}
		return getenv(name)
	})
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return simulator.Simulate(ctx, pool, flags.Arg(0), simulator.Config{
		Summarizer: app.NewSummarizer(cfg),
		Extractor:  app.NewExtractor(cfg),
		Embedder:   app.NewEmbedder(cfg),
		Start:      startAt,
		Out:        stdout,
	})
}
