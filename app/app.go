// Package app wires the configured adapters into the HTTP app. The local
// server and the Vercel function both build the service through it.
package app

import (
	"context"
	"log/slog"
	"runtime/debug"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"mentormemory/auth"
	"mentormemory/config"
	"mentormemory/counselor"
	"mentormemory/embedder"
	"mentormemory/extractor"
	"mentormemory/handlers"
	"mentormemory/memory"
	"mentormemory/postgres"
	"mentormemory/summarizer"
	"mentormemory/worker"
)

// App is the running service and what it holds open.
type App struct {
	Handler *echo.Echo
	Pool    *pgxpool.Pool
	// Worker does the background work (memory extraction, ending idle
	// sessions); the long-running server runs it, see worker.Run.
	Worker   *worker.Worker
	verifier *auth.Verifier
}

// New connects to the database and builds the app. It does not migrate:
// the caller decides when (the server does at start, Vercel at deploy).
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	verifier, err := auth.NewVerifier(ctx, auth.Config{
		JWTSecret:   cfg.JWTSecret,
		SupabaseURL: cfg.SupabaseURL,
		Issuer:      cfg.JWTIssuer,
	})
	if err != nil {
		return nil, err
	}
	sessions, err := sessionPolicy(cfg)
	if err != nil {
		verifier.Close()
		return nil, err
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		verifier.Close()
		return nil, err
	}
	store := postgres.NewStore(pool, cfg.ArchiveTurns)
	summary := NewSummarizer(cfg)
	if offline, ok := summary.(*summarizer.Offline); ok {
		store.WithInlineSummarizer(offline)
	}
	extract := NewExtractor(cfg)
	if extract != nil {
		store.WithExtraction()
	}
	embed := NewEmbedder(cfg)
	svc := memory.NewService(store, summary, log).WithEmbedder(embed)
	work := worker.New(store, worker.Config{Extractor: extract, Embedder: embed, Concurrency: cfg.MemoryWorkers}, log)
	svc.OnJobQueued(work.Wake)
	return &App{
		Handler: handlers.NewServer(handlers.Deps{
			Service: svc, Verifier: verifier, Sessions: sessions, DB: store, Counselor: newCounselor(cfg, svc), Log: log,
			Web: webConfig(cfg), CORSOrigins: cfg.CORSOrigins,
		}),
		Pool:     pool,
		Worker:   work,
		verifier: verifier,
	}, nil
}

// NewExtractor returns the model that learns memories from exchanges, or
// nil without a model key: extraction is then off, and memories come only
// through the API.
func NewExtractor(cfg config.Config) memory.Extractor {
	if cfg.OpenAIKey == "" {
		return nil
	}
	return extractor.NewOpenAI(extractor.Config{
		APIKey:  cfg.OpenAIKey,
		BaseURL: cfg.OpenAIBaseURL,
		Model:   cfg.OpenAIModel,
		Timeout: cfg.OpenAITimeout,
	})
}

// NewEmbedder returns the embedding model, or nil when none is configured:
// recall then ranks by words alone.
func NewEmbedder(cfg config.Config) memory.Embedder {
	if cfg.EmbeddingModel == "" {
		return nil
	}
	return embedder.NewOpenAI(embedder.Config{
		APIKey:  cfg.EmbeddingKey,
		BaseURL: cfg.EmbeddingBaseURL,
		Model:   cfg.EmbeddingModel,
		Timeout: cfg.OpenAITimeout,
	})
}

// NewSummarizer picks the model-backed summarizer when a key is configured
// and the offline one otherwise.
func NewSummarizer(cfg config.Config) memory.Summarizer {
	if cfg.OpenAIKey == "" {
		return summarizer.NewOffline()
	}
	return summarizer.NewOpenAI(summarizer.OpenAIConfig{
		APIKey:  cfg.OpenAIKey,
		BaseURL: cfg.OpenAIBaseURL,
		Model:   cfg.OpenAIModel,
		Timeout: cfg.OpenAITimeout,
	})
}

// newCounselor returns the chat, or nil when no model key is configured.
func newCounselor(cfg config.Config, svc *memory.Service) *counselor.Counselor {
	if cfg.OpenAIKey == "" {
		return nil
	}
	return counselor.New(counselor.Config{
		APIKey:  cfg.OpenAIKey,
		BaseURL: cfg.OpenAIBaseURL,
		Model:   cfg.OpenAIModel,
		Timeout: cfg.OpenAITimeout,
	}, svc)
}

// sessionPolicy builds the optional check of each token's session with
// Supabase Auth (SUPABASE_AUTH_CHECK=remote).
func sessionPolicy(cfg config.Config) (handlers.SessionPolicy, error) {
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

// webConfig is what the web client is told and allowed. The JWT secret
// reaches the handlers only in dev mode, the one case that mints tokens.
func webConfig(cfg config.Config) handlers.WebConfig {
	w := handlers.WebConfig{
		SupabaseURL:     cfg.SupabaseURL,
		SupabaseAnonKey: cfg.SupabaseAnonKey,
		DevMode:         cfg.DevMode,
	}
	if cfg.DevMode {
		w.DevTokenSecret = cfg.JWTSecret
	}
	return w
}

// Close releases the database pool and stops key refreshes.
func (a *App) Close() {
	a.Pool.Close()
	a.verifier.Close()
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
