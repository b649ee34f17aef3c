package handlers

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
	"mentormemory/worker"
)

// JobRunner does the background work due within a time limit.
type JobRunner interface {
	Drain(ctx context.Context, until time.Time) (worker.Drained, error)
}

// DrainWindow is how long one call of /api/jobs/run starts jobs for. The
// last one started runs to its end (a model call is bounded by its own
// timeout, 20 s by default), and the whole call stays within the Vercel
// function's 60 s.
const DrainWindow = 25 * time.Second

// runJobs is GET /api/jobs/run, for a scheduler that holds the cron
// secret (Vercel Cron sends it as a bearer token; requireBearer checks
// it): it does the background work due, as a long-running server's worker
// would, and says what it did.
func runJobs(jobs JobRunner) echo.HandlerFunc {
	return func(c echo.Context) error {
		done, err := jobs.Drain(c.Request().Context(), time.Now().Add(DrainWindow))
		if err != nil {
			return err
		}
		return answer(c, http.StatusOK, "done", done)
	}
}

// requireBearer lets through a caller that sends secret as a bearer token,
// comparing in constant time, and refuses the others with refusal (401).
func requireBearer(secret, refusal string) echo.MiddlewareFunc {
	want := []byte("Bearer " + secret)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			got := []byte(strings.TrimSpace(c.Request().Header.Get(echo.HeaderAuthorization)))
			if subtle.ConstantTimeCompare(got, want) != 1 {
				return mentor.Errorf(mentor.CodeUnauthenticated, "%s", refusal)
			}
			return next(c)
		}
	}
}
