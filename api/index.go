// Package handler is the Vercel Go function: every /api/* route, and /mcp,
// is served by the same app the local server runs, built once per function
// instance.
package handler

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"sync"

	"mentormemory/app"
	"mentormemory/config"
)

var (
	once     sync.Once
	instance http.Handler
	startErr error
)

func build() {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		startErr = err
		return
	}
	// A function is public by nature: dev sign-in there would hand anyone a
	// token signed with the project's secret.
	if cfg.Auth.DevMode {
		startErr = errors.New("MENTOR_DEV_MODE is refused on Vercel: dev sign-in is for a local server")
		return
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	// The function's memory is fixed and small (1 GB by default): the
	// collector tightens before the platform ends the instance. Go's own
	// GOGC (100) is kept: an instance serves few requests at once.
	app.LimitMemory(os.Getenv, log)
	a, err := app.New(context.Background(), cfg, log)
	if err != nil {
		startErr = err
		return
	}
	instance = a.Handler
}

// Handler serves one request.
func Handler(w http.ResponseWriter, r *http.Request) {
	once.Do(build)
	if startErr != nil {
		slog.Error("service not configured", "err", startErr)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"success":false,"error":"Service not configured"}`))
		return
	}
	instance.ServeHTTP(w, r)
}
