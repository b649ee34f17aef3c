package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/semaphore"

	"mentormemory/mentor"
)

// InFlight bounds what the signed-in requests in flight hold: a body near the
// size limit cost 5 to 10 MB while it was decoded, checked and sent to the
// database, and an answer stays in memory until the client has read it.
// Unbounded, 150 posts of 2 MB at once took 1.6 GB. The zero value admits
// everything.
type InFlight struct {
	Requests  int           // requests served at once
	BodyBytes int64         // bytes of the bodies they announce, together
	Wait      time.Duration // how long a request waits for room before a 503
}

// admit serves a request once there is room for it and for the body it
// announces, waiting up to l.Wait; otherwise it answers 503 with
// Retry-After. A body of unknown length counts as the largest allowed. It
// runs after auth, so a request without a valid token is refused before it
// waits or its body is read, and it holds the room until the answer is
// written.
func admit(l InFlight) echo.MiddlewareFunc {
	if l == (InFlight{}) {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	requests := semaphore.NewWeighted(int64(l.Requests))
	bodies := semaphore.NewWeighted(l.BodyBytes)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			size := req.ContentLength
			if size < 0 {
				size = MaxBodyBytes
			}
			ctx, cancel := context.WithTimeout(req.Context(), l.Wait)
			defer cancel()
			if err := requests.Acquire(ctx, 1); err != nil {
				return busy(fmt.Errorf("%d requests in flight: %w", l.Requests, err))
			}
			defer requests.Release(1)
			// Bodiless requests never queue behind large bodies.
			if size > 0 {
				if err := bodies.Acquire(ctx, size); err != nil {
					return busy(fmt.Errorf("%d body bytes in flight: %w", l.BodyBytes, err))
				}
				defer bodies.Release(size)
			}
			return next(c)
		}
	}
}

func busy(cause error) error {
	return mentor.Busy("Too many requests in progress, please retry", cause)
}
