// Package app wires the configured adapters into the HTTP app. The local
// server and the Vercel function both build the service through it.
package app

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"mentormemory/auth"
	"mentormemory/config"
	"mentormemory/counselor"
	"mentormemory/handlers"
	"mentormemory/memory"
	"mentormemory/postgres"
	"mentormemory/summarizer"
)

// App is the running service and what it holds open.
type App struct {
	Handler  *echo.Echo
	Pool     *pgxpool.Pool
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
	pool, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		verifier.Close()
		return nil, err
	}
	store := postgres.NewStore(pool, cfg.ArchiveTurns)
	svc := memory.NewService(store, NewSummarizer(cfg), log)
	return &App{
		Handler: handlers.NewServer(handlers.Deps{
			Service: svc, Verifier: verifier, DB: store, Counselor: newCounselor(cfg, svc), Log: log,
			Web: webConfig(cfg),
		}),
		Pool:     pool,
		verifier: verifier,
	}, nil
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
