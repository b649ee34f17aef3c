// Package apptest runs the real HTTP app on a fresh database for tests:
// the handler tests, the browser tests and the search-quality measurement
// all start the service the same way, through Start.
package apptest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/auth"
	"mentormemory/counselor"
	"mentormemory/handlers"
	"mentormemory/memory"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
	"mentormemory/summarizer"
)

// Secret signs the HS256 tokens of the service Start runs, unless Options
// configures other keys.
const Secret = "apptest-secret-that-is-at-least-32-characters"

type Options struct {
	Summarizer   memory.Summarizer // default: the offline one
	ArchiveTurns int               // default 50
	Auth         auth.Config       // default: HS256 with Secret
	// ModelURL, when set, enables the counselor against that (fake)
	// OpenAI-compatible server; MaxToolRounds bounds its tool loop.
	ModelURL      string
	MaxToolRounds int
	Web           handlers.WebConfig
	Sessions      handlers.SessionPolicy // default: tokens are only verified locally
	CORSOrigins   []string
	// DatabaseURL, when set, is the migrated database the app connects to,
	// as the server does, instead of a fresh one: a test can put a proxy
	// that misbehaves between them.
	DatabaseURL string
	TxTimeout   time.Duration // default: postgres.DefaultTxTimeout
}

// Service is a running app and its database.
type Service struct {
	Pool *pgxpool.Pool // superuser, for seeding and checking
	URL  string
}

// Start runs the app on a fresh, migrated database, on 127.0.0.1, until the
// test ends.
func Start(tb testing.TB, opts Options) *Service {
	tb.Helper()
	if opts.Summarizer == nil {
		opts.Summarizer = summarizer.NewOffline()
	}
	if opts.ArchiveTurns == 0 {
		opts.ArchiveTurns = 50
	}
	if opts.Auth.JWTSecret == "" && opts.Auth.SupabaseURL == "" {
		opts.Auth.JWTSecret = Secret
	}
	pool := appPool(tb, opts.DatabaseURL)
	// Server errors show in the failing test's output; the rest is noise.
	log := slog.New(slog.NewTextHandler(testLog{tb}, &slog.HandlerOptions{Level: slog.LevelError}))
	verifier, err := auth.NewVerifier(context.Background(), opts.Auth)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(verifier.Close)
	store := postgres.NewStore(pool, opts.ArchiveTurns)
	if offline, ok := opts.Summarizer.(*summarizer.Offline); ok {
		store.WithInlineSummarizer(offline)
	}
	if opts.TxTimeout > 0 {
		store = store.WithTxTimeout(opts.TxTimeout)
	}
	svc := memory.NewService(store, opts.Summarizer, log)
	var chat *counselor.Counselor
	if opts.ModelURL != "" {
		chat = counselor.New(counselor.Config{
			APIKey: "test-key", BaseURL: opts.ModelURL, Model: "test-model",
			Timeout: 10 * time.Second, MaxToolRounds: opts.MaxToolRounds,
		}, svc)
	}
	srv := httptest.NewServer(handlers.NewServer(handlers.Deps{
		Service: svc, Verifier: verifier, Sessions: opts.Sessions, DB: store, Counselor: chat, Log: log,
		Web: opts.Web, CORSOrigins: opts.CORSOrigins,
	}))
	tb.Cleanup(srv.Close)
	return &Service{Pool: pool, URL: srv.URL}
}

// appPool is the app's pool: on a fresh, migrated database, or through
// databaseURL as the server connects.
func appPool(tb testing.TB, databaseURL string) *pgxpool.Pool {
	if databaseURL == "" {
		return pgtest.NewPool(tb)
	}
	pool, err := postgres.Open(context.Background(), databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// testLog writes log lines to the test's log.
type testLog struct{ tb testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
