// Package handlers is the HTTP face of the memory: Echo routes, the auth
// middleware, request decoding and the one place errors are rendered.
package handlers

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"mentormemory/mcpserver"
	"mentormemory/mentor"
	"mentormemory/metrics"
	"mentormemory/tools"
)

// MaxBodyBytes bounds every request body; a client resending a long history
// stays well inside it.
const MaxBodyBytes = 2 << 20

// TokenVerifier checks a bearer token and returns the caller it names.
type TokenVerifier interface {
	Verify(token string) (mentor.Caller, error)
}

// Pinger reports whether the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps is what the HTTP app is built from.
type Deps struct {
	Service  *mentor.Service
	Verifier TokenVerifier
	// Sessions optionally confirms each token's session with Supabase Auth.
	Sessions SessionPolicy
	// DB answers /healthz, on a connection requests cannot take
	// (postgres.Health).
	DB Pinger
	// Counselor answers chat messages; nil when no model is configured, and
	// the chat endpoint then says how to configure one.
	Counselor Counselor
	Log       *slog.Logger
	// Web configures the browser client served at / (see web.go).
	Web WebConfig
	// CORSOrigins are the other browser origins (the Next.js app's) allowed
	// to call the API; none when empty.
	CORSOrigins []string
	// Limits bound each facilitator's requests a minute, by kind; none when
	// zero.
	Limits mentor.Limits
	// InFlight bounds the signed-in requests in flight; the zero value sets
	// no bound.
	InFlight InFlight
	// CronSecret and Jobs, both set, open GET /api/jobs/run to a scheduler.
	CronSecret string
	Jobs       JobRunner
	// Metrics counts the requests; with MetricsToken set, GET /metrics
	// serves them on this app to a caller that sends it as a bearer token.
	Metrics      *metrics.Metrics
	MetricsToken string
}

// NewServer returns the whole HTTP app. The local server and the Vercel
// function both get it through app.New. Every route is here.
func NewServer(d Deps) *echo.Echo {
	log := d.Log
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = renderError
	e.JSONSerializer = wholeJSON{}

	// Order: request id → logger → recover → answer headers and write
	// deadline → CORS → body limit → auth and the consistency token →
	// admission → the request's kind (the last three per route). The logger sits outside recover so that a
	// panic's request is logged like any other failed one; CORS comes before
	// auth, as a browser's preflight carries no token; admission comes after
	// auth, so a request without a valid token neither waits nor takes room.
	e.Use(requestID())
	e.Use(requestLogger(log, d.Metrics))
	e.Use(recoverPanics(log))
	e.Use(answerHeaders())
	e.Use(writeDeadline(WriteAnswerTimeout))
	if len(d.CORSOrigins) > 0 {
		e.Use(corsFor(d.CORSOrigins))
	}
	e.Use(bodyLimit(MaxBodyBytes, map[string]int64{"/api/import": MaxImportBytes}))

	h := &handler{svc: d.Service, db: d.DB, tools: tools.NewExecutor(d.Service), counselor: d.Counselor, metrics: d.Metrics}
	e.GET("/healthz", h.health)
	e.GET("/api/openapi.json", serveOpenAPI)

	// Auth is attached per route, not to a group: a group's middleware would
	// also answer unknown paths and wrong methods, hiding 404 and 405. With
	// the caller comes the consistency token they bring (the public routes
	// read and write nothing of a facilitator's, so they take none).
	authed, admitted := chain(requireAuth(d.Verifier, d.Sessions), consistencyTokens()), admit(d.InFlight)
	// Then the request's kind, for its limit a minute (see quota.go).
	limit := perMinute{d.Limits}
	read, search, write, model := limit.of(mentor.ReadRequests), limit.of(mentor.SearchRequests),
		limit.of(mentor.WriteRequests), limit.of(mentor.ModelRequests)
	e.GET("/api/conversation-memory", h.getConversationMemory, authed, admitted, limit.by(readOrSearch))
	e.POST("/api/conversation-memory", h.postConversationMemory, authed, admitted, write)
	e.DELETE("/api/conversation-memory", h.deleteConversationMemory, authed, admitted, write)
	e.GET("/api/archives/:id", h.getArchive, authed, admitted, read)
	e.GET("/api/learners", h.listLearners, authed, admitted, read)
	e.POST("/api/learners", h.createLearner, authed, admitted, write)
	e.POST("/api/learners/:id/consolidate", h.consolidate, authed, admitted, write)
	e.GET("/api/consolidations", h.listConsolidations, authed, admitted, read)
	e.GET("/api/learners/:id/profile", h.learnerProfile, authed, admitted, read)
	e.PUT("/api/learners/:id/profile", h.writeProfileLines, authed, admitted, write)
	e.PATCH("/api/learners/:id", h.renameLearner, authed, admitted, write)
	e.DELETE("/api/learners/:id", h.eraseLearner, authed, admitted, write)
	e.DELETE("/api/account", h.eraseAccount, authed, admitted, write)
	e.GET("/api/erasures", h.listErasures, authed, admitted, read)
	e.GET("/api/memories", h.listMemories, authed, admitted, read)
	e.POST("/api/memories", h.addMemory, authed, admitted, write)
	e.GET("/api/memories/context", h.memoryContext, authed, admitted, search)
	e.PATCH("/api/memories/:id", h.correctMemory, authed, admitted, write)
	e.DELETE("/api/memories/:id", h.forgetMemory, authed, admitted, write)
	e.GET("/api/memories/:id/history", h.memoryHistory, authed, admitted, read)
	e.GET("/api/memories/:id/sources", h.memorySources, authed, admitted, read)
	e.DELETE("/api/memories", h.forgetMemories, authed, admitted, write)
	e.GET("/api/learners/:id/learning", h.learningNow, authed, admitted, read)
	e.GET("/api/learners/:id/settings", h.learnerSettings, authed, admitted, read)
	e.PUT("/api/learners/:id/settings", h.writeLearnerSettings, authed, admitted, write)
	e.GET("/api/account/settings", h.accountSettings, authed, admitted, read)
	e.PUT("/api/account/settings", h.writeAccountSettings, authed, admitted, write)
	e.POST("/api/sessions/end", h.endSession, authed, admitted, write)
	e.GET("/api/opening-context", h.openingContext, authed, admitted, read)
	e.GET("/api/export", h.exportAccount, authed, admitted, read)
	e.POST("/api/import", h.importArchive, authed, admitted, write)
	e.GET("/api/tools", h.listTools, authed, admitted) // a constant: nothing to limit
	e.POST("/api/tools/call", h.callTool, authed, admitted, model)
	e.POST("/api/counselor", h.counselorChat, authed, admitted, model)
	// The same tools over the Model Context Protocol, for other assistants.
	// No kind of its own: each tool call is charged as a mentor request
	// inside (see mcpserver.Handler), as POST /api/tools/call is, while
	// initializing and listing the tools cost nothing, as GET /api/tools.
	// GET and DELETE reach the endpoint too, after auth, which answers them
	// 405 as a stateless server does.
	e.Match([]string{http.MethodPost, http.MethodGet, http.MethodDelete}, "/mcp",
		serveMCP(mcpserver.Handler(h.tools, d.Limits, log)), authed, admitted)
	e.GET("/api/actions", h.listActions, authed, admitted, read)
	e.POST("/api/actions/:id/confirm", h.confirmAction, authed, admitted, write)
	e.POST("/api/actions/:id/cancel", h.cancelAction, authed, admitted, write)
	// Without a secret the route does not exist, like an unknown path.
	if d.CronSecret != "" && d.Jobs != nil {
		e.GET("/api/jobs/run", runJobs(d.Jobs),
			requireBearer(d.CronSecret, "This route is for the scheduler: send CRON_SECRET as a bearer token"))
	}
	if d.MetricsToken != "" && d.Metrics != nil {
		e.GET("/metrics", echo.WrapHandler(d.Metrics.Handler()),
			requireBearer(d.MetricsToken, "This route is for the operator: send METRICS_TOKEN as a bearer token"))
	}

	// The web client: its settings, dev sign-in, and one route per static
	// file (see static.go), each with the page's security headers.
	headers := securityHeaders(contentSecurityPolicy(d.Web.SupabaseURL))
	e.GET("/api/config", clientConfig(d.Web, d.Counselor != nil), headers)
	// Off, the dev sign-in route does not exist at all, so it answers the
	// same 404 as any unknown path and reveals nothing.
	if d.Web.DevTokens != nil {
		e.POST("/api/dev/token", devToken(d.Web.DevTokens), headers)
	}
	serveStaticFiles(e, headers)
	return e
}

type handler struct {
	svc       *mentor.Service
	db        Pinger
	tools     *tools.Executor
	counselor Counselor
	metrics   *metrics.Metrics
}
