package handlers

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"mentormemory/mentor"
	"mentormemory/metrics"
)

// plainRequestID is a request id the server keeps as the client sent it:
// short, and letters, digits and dashes only.
var plainRequestID = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// requestID gives every request an id, for its log line and its answer's
// X-Request-ID. A client's own id (a proxy's, or the Next.js app's, to
// follow a request across services) is kept when it is plain; any other is
// replaced, since it would go as it is into the log and the answer's
// headers.
func requestID() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			id := c.Request().Header.Get(echo.HeaderXRequestID)
			if !plainRequestID.MatchString(id) {
				id = rand.Text()
			}
			c.Response().Header().Set(echo.HeaderXRequestID, id)
			return next(c)
		}
	}
}

// answerHeaders marks every answer, errors included, as one that neither a
// cache nor a browser's type sniffing should act on: answers carry a
// facilitator's data. The static files of the web client set their own
// caching (see static.go).
func answerHeaders() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("Cache-Control", "no-store")
			h.Set("X-Content-Type-Options", "nosniff")
			return next(c)
		}
	}
}

// requireAuth verifies the bearer token locally and puts the caller in the
// request's context, where the store picks it up. With a session check
// configured, the token's session is then confirmed with the identity
// provider, on every request or only on writes.
func requireAuth(verifier TokenVerifier, sessions SessionPolicy) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			header := c.Request().Header.Get(echo.HeaderAuthorization)
			scheme, token, _ := strings.Cut(header, " ")
			token = strings.TrimSpace(token)
			if header == "" || !strings.EqualFold(scheme, "Bearer") || token == "" {
				if header == "" {
					return mentor.Errorf(mentor.CodeUnauthenticated, "Authentication required")
				}
				return mentor.Errorf(mentor.CodeUnauthenticated, "Invalid authentication")
			}
			caller, err := verifier.Verify(token)
			if err != nil {
				return err
			}
			req := c.Request()
			if sessions.appliesTo(req.Method) {
				if err := sessions.Check.Check(req.Context(), token, caller); err != nil {
					return err
				}
			}
			c.SetRequest(req.WithContext(mentor.WithCaller(req.Context(), caller)))
			return next(c)
		}
	}
}

// chain is first, then second: one middleware for a route to take.
func chain(first, second echo.MiddlewareFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return first(second(next))
	}
}

// SessionPolicy says whether and when requests confirm their token's session
// with the identity provider. The zero value checks nothing.
type SessionPolicy struct {
	Check      SessionChecker // nil: tokens are only verified locally
	WritesOnly bool           // check only requests that may change data
}

// SessionChecker confirms that a locally verified token's session has not
// ended (see auth.SessionCheck).
type SessionChecker interface {
	Check(ctx context.Context, token string, caller mentor.Caller) error
}

func (p SessionPolicy) appliesTo(method string) bool {
	if p.Check == nil {
		return false
	}
	readOnly := method == http.MethodGet || method == http.MethodHead
	return !p.WritesOnly || !readOnly
}

// corsFor lets the named origins call the API from a browser. Tokens travel
// in the Authorization header, never in cookies, so credentials stay off and
// no origin is ever a wildcard (config refuses one).
func corsFor(origins []string) echo.MiddlewareFunc {
	return middleware.CORSWithConfig(middleware.CORSConfig{
		AllowOrigins:  origins,
		AllowMethods:  []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPatch, http.MethodDelete},
		AllowHeaders:  []string{echo.HeaderAuthorization, echo.HeaderContentType, ConsistencyTokenHeader},
		ExposeHeaders: []string{echo.HeaderXRequestID, "Retry-After", ConsistencyTokenHeader},
		MaxAge:        600,
	})
}

// bodyLimit refuses bodies over max bytes with a 413, whether or not the
// client announced the length. A body the handler never reads (a request
// refused before it, for a missing token say) is given back to net/http as
// it came: net/http then closes the connection after a large unread body
// instead of reading it first, which a client that announced 2 MB and sent
// less could otherwise stall until the read timeout. A route of larger
// bodies, read as a stream, has its own limit in byRoute.
func bodyLimit(limit int64, byRoute map[string]int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			max := limit
			if routeMax, ok := byRoute[c.Path()]; ok {
				max = routeMax
			}
			if req.ContentLength > max {
				return mentor.Errorf(mentor.CodeTooLarge, "Request body too large (at most %d bytes)", max)
			}
			sent := req.Body
			limited := &readTracker{ReadCloser: http.MaxBytesReader(c.Response(), sent, max)}
			req.Body = limited
			err := next(c)
			if !limited.read {
				req.Body = sent
			}
			return err
		}
	}
}

// readTracker notes whether a body was read at all.
type readTracker struct {
	io.ReadCloser
	read bool
}

func (r *readTracker) Read(p []byte) (int, error) {
	r.read = true
	return r.ReadCloser.Read(p)
}

// WriteAnswerTimeout is how long an answer has to reach the client once it
// starts: the longest answers (a search of 100 results with their turns,
// about 6 MB) need 600 KB/s, the usual ones (under 60 KB) a few KB/s.
const WriteAnswerTimeout = 10 * time.Second

// writeDeadline gives each answer d to be written from the moment it
// starts, however long the route took to compute it. Without it a client
// that does not read holds its answer in memory, and its room among the
// requests in flight, until the server's WriteTimeout, which must leave
// the counselor its model rounds (app.HTTPServer): 100 such clients of a
// 6 MB search held 1 GB for 90 s.
func writeDeadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			res := c.Response()
			res.Before(func() {
				// Not every ResponseWriter can (a test's recorder cannot).
				_ = http.NewResponseController(res.Writer).SetWriteDeadline(time.Now().Add(d))
			})
			return next(c)
		}
	}
}

// requestLogger writes one line per request, and renders the error of a
// request that failed. A failed request's line carries the error with its
// hidden cause, whatever the status (4xx at warn, 5xx at error but for the
// 503s of mentor.ErrBusy, at warn), so the reason a client was refused can
// be found by its request id. The query
// string is left out: it can hold search text, and memory text is never
// logged at info level.
func requestLogger(log *slog.Logger, m *metrics.Metrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			status := c.Response().Status
			// The route's pattern, so that ids make no series of their own;
			// a path no route matched counts as one.
			m.ObserveRequest(cmp.Or(c.Path(), "unmatched"), c.Request().Method, status, time.Since(start))
			attrs := []any{
				"method", c.Request().Method,
				"path", c.Request().URL.Path,
				"status", status,
				"duration_ms", float64(time.Since(start).Microseconds()) / 1000,
				"request_id", c.Response().Header().Get(echo.HeaderXRequestID),
			}
			switch {
			case err == nil:
				log.Info("request", attrs...)
			case status >= 500 && !errors.Is(err, mentor.ErrBusy):
				log.Error("request", append(attrs, "err", err)...)
			default:
				log.Warn("request", append(attrs, "err", err)...)
			}
			return nil
		}
	}
}

// recoverPanics turns a panic in a handler into an internal error, which
// requestLogger renders and logs, and logs the panic with its stack.
func recoverPanics(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableErrorHandler: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			log.Error("panic", "err", err, "stack", string(stack),
				"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
			return mentor.Internal(err)
		},
	})
}
