package handlers

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"mentormemory/memory"
)

// requireAuth verifies the bearer token locally and puts the caller in the
// request's context, where the store picks it up.
func requireAuth(verifier TokenVerifier) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			header := c.Request().Header.Get(echo.HeaderAuthorization)
			scheme, token, _ := strings.Cut(header, " ")
			token = strings.TrimSpace(token)
			if header == "" || !strings.EqualFold(scheme, "Bearer") || token == "" {
				if header == "" {
					return memory.Errorf(memory.CodeUnauthenticated, "Authentication required")
				}
				return memory.Errorf(memory.CodeUnauthenticated, "Invalid authentication")
			}
			caller, err := verifier.Verify(token)
			if err != nil {
				return err
			}
			req := c.Request()
			c.SetRequest(req.WithContext(memory.WithCaller(req.Context(), caller)))
			return next(c)
		}
	}
}

// bodyLimit refuses bodies over max bytes with a 413, whether or not the
// client announced the length.
func bodyLimit(max int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > max {
				return memory.Errorf(memory.CodeTooLarge, "Request body too large (at most %d bytes)", max)
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, max)
			return next(c)
		}
	}
}

// requestLogger writes one line per request. The query string is left out:
// it can hold search text, and memory text is never logged at info level.
func requestLogger(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			log.Info("request",
				"method", c.Request().Method,
				"path", c.Request().URL.Path,
				"status", c.Response().Status,
				"duration_ms", float64(time.Since(start).Microseconds())/1000,
				"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
			return nil
		}
	}
}
