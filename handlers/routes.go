// Package handlers is the HTTP face of the memory: Echo routes, the auth
// middleware, request decoding and the one place errors are rendered.
package handlers

import (
	"context"
	"log/slog"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"mentormemory/memory"
)

// MaxBodyBytes bounds every request body; a client resending a long history
// stays well inside it.
const MaxBodyBytes = 2 << 20

// TokenVerifier checks a bearer token and returns the caller it names.
type TokenVerifier interface {
	Verify(token string) (memory.Caller, error)
}

// Pinger reports whether the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// NewServer returns the whole HTTP app. The local server and the Vercel
// function both call it.
func NewServer(svc *memory.Service, verifier TokenVerifier, db Pinger, log *slog.Logger) *echo.Echo {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(log)

	// Order: request id → recover → logger → body limit → auth (per group).
	e.Use(middleware.RequestID())
	e.Use(middleware.Recover())
	e.Use(requestLogger(log))
	e.Use(bodyLimit(MaxBodyBytes))

	h := &handler{svc: svc, db: db}
	e.GET("/healthz", h.health)

	// Auth is attached per route, not to a group: a group's middleware would
	// also answer unknown paths and wrong methods, hiding 404 and 405.
	authed := requireAuth(verifier)
	e.GET("/api/conversation-memory", h.getConversationMemory, authed)
	e.POST("/api/conversation-memory", h.postConversationMemory, authed)
	e.DELETE("/api/conversation-memory", h.deleteConversationMemory, authed)
	e.GET("/api/learners", h.listLearners, authed)
	e.POST("/api/learners", h.createLearner, authed)
	return e
}

type handler struct {
	svc *memory.Service
	db  Pinger
}
