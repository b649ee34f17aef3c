package handlers

import (
	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// perMinute limits each facilitator's requests of a kind a minute
// (mentor.Limits): plain reads, ranked reads (search and recall), writes,
// and the mentor's model (the counselor, and the tools its model calls).
// The request is not counted here but by its first database statement,
// which the charge rides with (mentor.WithRequestCharge): it costs no round
// trip of its own, and a request refused for it changes nothing.
type perMinute struct{ limits mentor.Limits }

// of is the middleware of routes whose requests are all of one kind.
func (p perMinute) of(kind mentor.Counter) echo.MiddlewareFunc {
	return p.by(func(echo.Context) mentor.Counter { return kind })
}

// by is the middleware of a route whose requests' kind depends on the
// request.
func (p perMinute) by(kind func(echo.Context) mentor.Counter) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if charge, limited := p.limits.Charge(kind(c), 1); limited {
				req := c.Request()
				c.SetRequest(req.WithContext(mentor.WithRequestCharge(req.Context(), charge)))
			}
			return next(c)
		}
	}
}

// readOrSearch is the kind of GET /api/conversation-memory, which searches
// when asked to.
func readOrSearch(c echo.Context) mentor.Counter {
	if c.QueryParams().Has("search") {
		return mentor.SearchRequests
	}
	return mentor.ReadRequests
}
