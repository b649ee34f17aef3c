package handlers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
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
//
// Each facilitator may hold at most a share of both, a quarter (a request,
// and a body of the largest size, at least): beyond it their requests are
// refused at once, so that one facilitator's flood leaves room for the
// others.
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
	shares := &facilitatorShares{
		requests: max(1, l.Requests/4),
		bytes:    max(MaxBodyBytes, l.BodyBytes/4),
		held:     map[string]*share{},
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			size := req.ContentLength
			// A body of unknown length counts as the largest allowed; so does
			// a larger one, which only a streamed route (an import) accepts
			// and reads a line at a time.
			if size < 0 || size > MaxBodyBytes {
				size = MaxBodyBytes
			}
			if caller, ok := mentor.CallerFrom(req.Context()); ok {
				release, err := shares.take(caller.UserID, size)
				if err != nil {
					return refuse(c, err)
				}
				defer release()
			}
			ctx, cancel := context.WithTimeout(req.Context(), l.Wait)
			defer cancel()
			if err := requests.Acquire(ctx, 1); err != nil {
				return refuse(c, busy(fmt.Errorf("%d requests in flight: %w", l.Requests, err)))
			}
			defer requests.Release(1)
			// Bodiless requests never queue behind large bodies.
			if size > 0 {
				if err := bodies.Acquire(ctx, size); err != nil {
					return refuse(c, busy(fmt.Errorf("%d body bytes in flight: %w", l.BodyBytes, err)))
				}
				defer bodies.Release(size)
			}
			return next(c)
		}
	}
}

// drainTimeout bounds how long a refused request's body is read.
const drainTimeout = 5 * time.Second

// refuse returns err after reading what is left of the refused request's
// body (at most MaxBodyBytes, for at most drainTimeout) and dropping it. A
// client still sending a large body when it is refused would otherwise
// have its connection closed under it (net/http closes rather than read
// more than 256 KB that nobody asked for), and it would see a broken pipe
// instead of the 503 and its Retry-After. Read and dropped, the body
// holds no memory.
func refuse(c echo.Context, err error) error {
	_ = http.NewResponseController(c.Response().Writer).SetReadDeadline(time.Now().Add(drainTimeout))
	_, _ = io.Copy(io.Discard, io.LimitReader(c.Request().Body, MaxBodyBytes))
	return err
}

// facilitatorShares count what each facilitator's requests hold in flight.
type facilitatorShares struct {
	requests int
	bytes    int64
	mu       sync.Mutex
	held     map[string]*share
}

// share is what one facilitator's requests hold.
type share struct {
	requests int
	bytes    int64
}

// take counts a request of the facilitator with a body of size, or refuses
// it when that would pass their share; what it returns gives it back.
func (f *facilitatorShares) take(facilitator string, size int64) (release func(), err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.held[facilitator]
	if s == nil {
		s = &share{}
		f.held[facilitator] = s
	}
	if s.requests+1 > f.requests || s.bytes+size > f.bytes {
		if s.requests == 0 {
			delete(f.held, facilitator)
		}
		return nil, mentor.Busy("Too many of your requests in progress, please retry",
			fmt.Errorf("facilitator %s holds %d requests and %d body bytes in flight", facilitator, s.requests, s.bytes))
	}
	s.requests++
	s.bytes += size
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		s.requests--
		s.bytes -= size
		if s.requests == 0 {
			delete(f.held, facilitator)
		}
	}, nil
}

func busy(cause error) error {
	return mentor.Busy("Too many requests in progress, please retry", cause)
}
