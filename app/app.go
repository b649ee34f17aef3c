// Package app wires the configured adapters into the service. New is the
// only place the service is built: the server, the Vercel function, the
// simulator, the benchmark and the tests all run what it returns.
package app

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"mentormemory/auth"
	"mentormemory/closing"
	"mentormemory/config"
	"mentormemory/consolidator"
	"mentormemory/counselor"
	"mentormemory/embedder"
	"mentormemory/extractor"
	"mentormemory/handlers"
	"mentormemory/llm"
	"mentormemory/mentor"
	"mentormemory/metrics"
	"mentormemory/postgres"
	"mentormemory/summarizer"
	"mentormemory/worker"
)

// App is the running service and what it holds open.
type App struct {
	Handler *echo.Echo
	Pool    *pgxpool.Pool
	Service *mentor.Service
	// Worker does the background work (memory extraction, ending idle
	// sessions); the long-running server runs it, see worker.Run.
	Worker *worker.Worker
	// Metrics are what the operator scrapes (see MetricsHandler).
	Metrics *metrics.Metrics
	close   []func()
}

// Option changes how New builds the app, for the callers that run it
// somewhere other than a server of its own.
type Option func(*options)

type options struct {
	pool          *pgxpool.Pool
	summarizer    mentor.Summarizer
	extractor     mentor.Extractor
	txTimeout     time.Duration
	lockTimeout   time.Duration
	maxToolRounds int
	clock         func() time.Time
}

// WithPool runs the app on pool, which the caller keeps and closes,
// instead of connecting to the configured database.
func WithPool(pool *pgxpool.Pool) Option { return func(o *options) { o.pool = pool } }

// WithSummarizer replaces the configured summarizer.
func WithSummarizer(s mentor.Summarizer) Option { return func(o *options) { o.summarizer = s } }

// WithExtractor learns memories with e, whether or not a model is
// configured (the simulator replays recorded extractions this way).
func WithExtractor(e mentor.Extractor) Option { return func(o *options) { o.extractor = e } }

// WithTxTimeout replaces postgres.DefaultTxTimeout.
func WithTxTimeout(d time.Duration) Option { return func(o *options) { o.txTimeout = d } }

// WithLockTimeout replaces postgres.DefaultLockTimeout.
func WithLockTimeout(d time.Duration) Option { return func(o *options) { o.lockTimeout = d } }

// WithClock has the worker's consolidation plan at the times now gives (a
// simulation's), instead of the wall clock's.
func WithClock(now func() time.Time) Option { return func(o *options) { o.clock = now } }

// WithMaxToolRounds replaces counselor.DefaultMaxToolRounds.
func WithMaxToolRounds(n int) Option { return func(o *options) { o.maxToolRounds = n } }

// New builds the service as configured. It does not migrate: the caller
// decides when (the server does at start, Vercel at deploy). Without keys
// to verify tokens with (cfg.Auth), which only the simulator runs without,
// every token is refused.
func New(ctx context.Context, cfg config.Config, log *slog.Logger, opts ...Option) (*App, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	a := &App{}
	verifier, err := newVerifier(ctx, cfg.Auth)
	if err != nil {
		return nil, err
	}
	if v, ok := verifier.(*auth.Verifier); ok {
		a.close = append(a.close, v.Close)
	}
	sessions, err := sessionPolicy(cfg.Auth)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Pool = o.pool
	if a.Pool == nil {
		if a.Pool, err = postgres.Open(ctx, cfg.Database.URL); err != nil {
			a.Close()
			return nil, err
		}
		a.close = append(a.close, a.Pool.Close)
	}

	limits := cfg.Limits.Limits
	store := postgres.NewStore(a.Pool, cfg.Database.ArchiveTurns).WithLimits(limits)
	// Every chat model call, the counselor's, the summaries' and the
	// extractions', is charged to the caller's daily model budget.
	if limits.ModelCallsPerDay > 0 || limits.ModelTokensPerDay > 0 {
		cfg.Model.Chat.Budget = mentor.NewModelBudget(store, limits)
	}
	a.Metrics = metrics.New(a.Pool, store, log)
	// The service's reads that may be a moment behind go to the read
	// replica, when there is one; the worker, which reads what was just
	// written, keeps to the primary.
	var reads mentor.Store = store
	if cfg.Database.ReplicaURL != "" {
		replicaPool, err := postgres.Open(ctx, cfg.Database.ReplicaURL)
		if err != nil {
			a.Close()
			return nil, err
		}
		replica := postgres.NewReplica(a.Pool, replicaPool,
			cmp.Or(cfg.Database.ReplicaMaxLag, config.DefaultReplicaMaxLag), a.Metrics, log)
		// Closed in this order: the probes stop before their pool.
		a.close = append(a.close, replica.Close, replicaPool.Close)
		reads = store.WithReplica(replica)
	}
	models := newModels(cfg.Model, log, a.Metrics, o)
	// The offline summarizer needs no network and answers in about a
	// millisecond, so a post writes its summary in its own transaction.
	if offline, ok := models.summarizer.(*summarizer.Offline); ok {
		store.WithInlineSummarizer(offline)
	}
	if o.txTimeout > 0 {
		store.WithTxTimeout(o.txTimeout)
	}
	if o.lockTimeout > 0 {
		store.WithLockTimeout(o.lockTimeout)
	}
	if models.extractor != nil {
		store.WithExtraction()
	}
	if models.closing != nil {
		store.WithClosingWords()
	}
	// The limits on work in flight default here too, for a Config built in
	// code. Requests share the store, and through it the pool, fairly; the
	// worker has its own bound (cfg.Model.Workers).
	busyWait := cmp.Or(cfg.Web.BusyWait, config.DefaultBusyWait)
	perFacilitator := cmp.Or(cfg.Database.PerFacilitator, config.DefaultPerFacilitator)
	fair := mentor.LimitPerFacilitator(reads, perFacilitator, busyWait)
	a.Service = mentor.NewService(fair, models.summarizer, log).WithEmbedder(models.embedder)
	a.Worker = worker.New(store, worker.Config{
		Extractor: models.extractor, Embedder: models.embedder, Concurrency: cfg.Model.Workers, Now: o.clock,
		Consolidator: models.consolidator, ClosingWriter: models.closing, Metrics: a.Metrics,
	}, log)
	a.Service.OnJobQueued(a.Worker.Wake)

	health := postgres.NewHealth(a.Pool)
	a.close = append(a.close, health.Close)
	deps := handlers.Deps{
		Service: a.Service, Verifier: verifier, Sessions: sessions, DB: health, Log: log,
		Web:         handlers.WebConfig{SupabaseURL: cfg.Auth.SupabaseURL, SupabaseAnonKey: cfg.Auth.SupabaseAnonKey},
		CORSOrigins: cfg.Web.CORSOrigins,
		Limits:      limits,
		InFlight: handlers.InFlight{
			Requests:  cmp.Or(cfg.Web.RequestsInFlight, config.DefaultRequestsInFlight),
			BodyBytes: cmp.Or(cfg.Web.BodyBytesInFlight, config.DefaultBodyMBInFlight<<20),
			Wait:      busyWait,
		},
		CronSecret:   cfg.Web.CronSecret,
		Jobs:         a.Worker,
		Metrics:      a.Metrics,
		MetricsToken: cfg.Web.MetricsToken,
	}
	// Left nil when off: the handlers then say how to turn them on.
	if cfg.Model.ChatConfigured() {
		deps.Counselor = counselor.New(counselor.Config{
			Config: cfg.Model.Chat.For(llm.PurposeCounselor, a.Metrics, log), MaxToolRounds: o.maxToolRounds, Deadline: cfg.Model.CounselorDeadline,
			ContextTokens: cfg.Model.CounselorContextTokens,
		}, a.Service)
	}
	if cfg.Auth.DevMode && cfg.Auth.JWTSecret != "" {
		deps.Web.DevTokens = demoTokens{secret: cfg.Auth.JWTSecret}
	}
	a.Handler = handlers.NewServer(deps)
	return a, nil
}

// models are the model adapters the configuration selects.
type models struct {
	summarizer mentor.Summarizer
	extractor  mentor.Extractor // nil: extraction is off, memories come only through the API
	embedder   mentor.Embedder  // nil: recall ranks by words alone
	// consolidator plans consolidation runs; nil: by rules, offline.
	consolidator mentor.Consolidator
	// closing writes sessions' goodbye lines and summaries; nil: the
	// templates.
	closing mentor.ClosingWriter
}

func newModels(cfg config.Model, log *slog.Logger, observer llm.Observer, o options) models {
	m := models{summarizer: o.summarizer, extractor: o.extractor}
	if m.extractor == nil {
		m.extractor = NewExtractor(cfg, log, observer)
	}
	if m.summarizer == nil && cfg.ChatConfigured() {
		m.summarizer = summarizer.NewOpenAI(cfg.Chat.For(llm.PurposeSummary, observer, log))
	}
	if m.summarizer == nil {
		m.summarizer = summarizer.NewOffline()
	}
	if cfg.EmbeddingConfigured() {
		m.embedder = embedder.NewOpenAI(cfg.Embedding.For(llm.PurposeEmbeddings, observer, log))
	}
	if cfg.ChatConfigured() {
		m.consolidator = consolidator.NewOpenAI(cfg.Chat.For(llm.PurposeConsolidation, observer, log))
		m.closing = closing.NewOpenAI(cfg.Chat.For(llm.PurposeClosing, observer, log))
	}
	return m
}

// NewExtractor returns the configured model's memory extractor, logging to
// log and reporting its calls to observer (nil: to nobody), or nil without
// a model key.
func NewExtractor(cfg config.Model, log *slog.Logger, observer llm.Observer) mentor.Extractor {
	if !cfg.ChatConfigured() {
		return nil
	}
	return extractor.NewOpenAI(cfg.Chat.For(llm.PurposeExtraction, observer, log))
}

// newVerifier verifies tokens with the configured keys; without any, it
// refuses every token.
func newVerifier(ctx context.Context, cfg config.Auth) (handlers.TokenVerifier, error) {
	if cfg.JWTSecret == "" && cfg.SupabaseURL == "" {
		return refuseTokens{}, nil
	}
	return auth.NewVerifier(ctx, auth.Config{JWTSecret: cfg.JWTSecret, SupabaseURL: cfg.SupabaseURL, Issuer: cfg.JWTIssuer})
}

type refuseTokens struct{}

func (refuseTokens) Verify(string) (mentor.Caller, error) {
	return mentor.Caller{}, mentor.Errorf(mentor.CodeUnauthenticated, "Invalid authentication")
}

// sessionPolicy builds the optional check of each token's session with
// Supabase Auth (SUPABASE_AUTH_CHECK=remote).
func sessionPolicy(cfg config.Auth) (handlers.SessionPolicy, error) {
	if !cfg.SessionCheck {
		return handlers.SessionPolicy{}, nil
	}
	check, err := auth.NewSessionCheck(auth.SessionCheckConfig{
		SupabaseURL: cfg.SupabaseURL,
		AnonKey:     cfg.SupabaseAnonKey,
		CacheTTL:    cfg.SessionCheckCache,
	})
	if err != nil {
		return handlers.SessionPolicy{}, err
	}
	return handlers.SessionPolicy{Check: check, WritesOnly: cfg.SessionCheckWritesOnly}, nil
}

// StartWorker runs the background worker beside the API until stop is
// called, whatever becomes of ctx (a server's context ends before its
// requests drain). stop waits for the job in hand to finish, so call it
// before Close; jobs still queued wait in the database for the next start.
// Calling stop again does nothing.
func (a *App) StartWorker(ctx context.Context) (stop func()) {
	workCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Worker.Run(workCtx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// Close releases the database pool (unless the caller gave it) and stops
// key refreshes.
func (a *App) Close() {
	for _, c := range a.close {
		c()
	}
}

// MaxHeaderBytes bounds a request's headers. A Supabase access token is
// well under 8 KiB (auth.MaxTokenBytes); Go's default of 1 MiB let a client
// without any token make the server hold about 4 MB per connection.
// Larger headers are answered 431.
const MaxHeaderBytes = 32 << 10

// HTTPServer serves the app at addr with the limits of a public server: a
// slow client cannot hold a connection by trickling its headers or body,
// headers are bounded, and a post, which may wait for its summary for
// mentor.SummaryBudget, has time to answer. WriteTimeout covers a route's
// work and its answer together, so it is long; a client that does not read
// is let go sooner, handlers.WriteAnswerTimeout after its answer starts.
func (a *App) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           a.Handler,
		MaxHeaderBytes:    MaxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      config.WriteTimeout,
		IdleTimeout:       2 * time.Minute,
	}
}

// MetricsServer serves the metrics alone, at GET /metrics on addr: a
// listener of the operator's, kept off the public port (METRICS_ADDR).
func (a *App) MetricsServer(addr string) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.Metrics.Handler())
	return &http.Server{
		Addr:              addr,
		Handler:           mux,
		MaxHeaderBytes:    MaxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
}

// ServerGCPercent is the garbage collector's target heap growth for the
// long-running server when GOGC is not set. The service's live heap is a
// few megabytes, so Go's default (100) collects dozens of times a second
// under load; at concurrency 8 on 2 cores that cost a third of GET's
// throughput and pushed its p99 past 5 ms (README, Benchmarks). 400 trades
// a few tens of megabytes for it.
const ServerGCPercent = 400

// TuneGC applies ServerGCPercent unless GOGC is set, which then wins.
func TuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(ServerGCPercent)
	}
}
