// Package apptest holds the fixtures the tests share: Start runs the app
// as app.New builds it on a fresh database, StartWithUser with a
// facilitator and StartWithLearner with their learner too; NewUser and
// NewLearner make a facilitator with a token and their learners;
// AddMemory, PostTurns and EndSession write what a facilitator writes;
// Call, Client and Scenario send requests and check the answers; Exec,
// Count, Scalar and Column read and write as the database's owner; Used
// and EndWindow read a quota's counter and end its window; Logs collects
// what the app logs; SupabaseAuth stands in for Supabase Auth (JWKS,
// session check, sign-in); Scrape reads the metrics.
package apptest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app"
	"mentormemory/config"
	"mentormemory/llm"
	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
	"mentormemory/summarizer"
)

// Secret signs the HS256 tokens of the service Start runs, unless Options
// configures other keys.
const Secret = "apptest-secret-that-is-at-least-32-characters"

// Options configure the service Start runs; the zero value is the service
// as configured with HS256 tokens signed with Secret and no model.
type Options struct {
	Auth         config.Auth // default: HS256 with Secret
	Web          config.Web
	ArchiveTurns int // default 50
	// ModelURL, when set, configures the model as that (fake)
	// OpenAI-compatible server: the counselor answers, and exchanges queue
	// memory extraction. Summaries stay Summarizer's.
	ModelURL          string
	MaxToolRounds     int
	CounselorDeadline time.Duration     // default: counselor.DefaultDeadline
	Summarizer        mentor.Summarizer // default: the offline one
	// ModelSummaries has the model at ModelURL write the summaries, as
	// the app sets it up, instead of Summarizer.
	ModelSummaries bool
	// Limits are the facilitators' quotas; none by default.
	Limits mentor.Limits
	// Logs, when set, receives every log line of the app, at every level,
	// as JSON.
	Logs *Logs
	// DatabaseURL, when set, is the migrated database the app connects to,
	// as the server does, instead of a fresh one: a test can put a proxy
	// that misbehaves between them.
	DatabaseURL string
	TxTimeout   time.Duration // default: postgres.DefaultTxTimeout
	LockTimeout time.Duration // default: postgres.DefaultLockTimeout
	// Standby, when set, is a hot standby of the database's server
	// (pgtest.StandbyURL): the app reads from the test's database there
	// (DATABASE_REPLICA_URL), as far as ReplicaMaxLag (default
	// config.DefaultReplicaMaxLag) behind. Start waits until the standby
	// has the database.
	Standby       string
	ReplicaMaxLag time.Duration
}

// Service is a running app and its database.
type Service struct {
	Pool *pgxpool.Pool // superuser, for seeding and checking
	URL  string
	// ReplicaURL is the test's database on Options.Standby, which the app
	// reads from; "" without one.
	ReplicaURL   string
	metricsToken string
}

// Start runs the app, as app.New builds it, on a fresh, migrated database,
// on 127.0.0.1, until the test ends.
func Start(tb testing.TB, opts Options) *Service {
	tb.Helper()
	cfg := config.Config{Auth: opts.Auth, Web: opts.Web, Database: config.Database{ArchiveTurns: opts.ArchiveTurns},
		Limits: config.Limits{Limits: opts.Limits}}
	if cfg.Database.ArchiveTurns == 0 {
		cfg.Database.ArchiveTurns = 50
	}
	if cfg.Auth.JWTSecret == "" && cfg.Auth.SupabaseURL == "" {
		cfg.Auth.JWTSecret = Secret
	}
	if opts.ModelURL != "" {
		cfg.Model.Chat = llm.Config{APIKey: "test-key", BaseURL: opts.ModelURL, Model: "test-model", Timeout: 10 * time.Second}
		cfg.Model.CounselorDeadline = opts.CounselorDeadline
	}
	if opts.Summarizer == nil && !opts.ModelSummaries {
		opts.Summarizer = summarizer.NewOffline()
	}
	pool := appPool(tb, opts.DatabaseURL)
	if opts.Standby != "" {
		dbURL := pool.Config().ConnString()
		cfg.Database.ReplicaURL = pgtest.OnStandby(tb, dbURL, opts.Standby)
		cfg.Database.ReplicaMaxLag = opts.ReplicaMaxLag
		pgtest.WaitForReplay(tb, dbURL, cfg.Database.ReplicaURL)
	}
	// Server errors show in the failing test's output; the rest is noise.
	log := slog.New(slog.NewTextHandler(testLog{tb}, &slog.HandlerOptions{Level: slog.LevelError}))
	if opts.Logs != nil {
		log = slog.New(slog.NewJSONHandler(opts.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a, err := app.New(context.Background(), cfg, log, app.WithPool(pool), app.WithSummarizer(opts.Summarizer),
		app.WithTxTimeout(opts.TxTimeout), app.WithLockTimeout(opts.LockTimeout), app.WithMaxToolRounds(opts.MaxToolRounds))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(a.Close)
	// Served as the server serves it: the same limits and timeouts.
	srv := httptest.NewUnstartedServer(a.Handler)
	srv.Config = a.HTTPServer("")
	srv.Start()
	tb.Cleanup(srv.Close)
	return &Service{Pool: pool, URL: srv.URL, ReplicaURL: cfg.Database.ReplicaURL, metricsToken: cfg.Web.MetricsToken}
}

// StartWithUser runs the app as Start does, with a facilitator who signed
// up: where most tests of the API begin.
func StartWithUser(tb testing.TB, opts Options) (*Service, User) {
	tb.Helper()
	s := Start(tb, opts)
	return s, s.NewUser(tb)
}

// StartWithLearner runs the app as StartWithUser does, with one learner of
// the facilitator's, named name: where most tests of a learner's memory
// begin. It returns the service, the facilitator and the learner's id.
func StartWithLearner(tb testing.TB, opts Options, name string) (*Service, User, string) {
	tb.Helper()
	s, u := StartWithUser(tb, opts)
	return s, u, s.NewLearner(tb, u, name)
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
