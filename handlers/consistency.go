package handlers

import (
	"strings"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// ConsistencyTokenHeader carries read-your-writes between server instances.
// With a read replica configured, the answer to a request that wrote names
// where its write left the database; a client that sends the newest token
// it was given back with its next requests has their reads that may lag
// (search, recall, the opening, memory lists, the export, the tools' and
// the counselor's reads) served only by a replica that has replayed that
// write, or else by the primary, whichever instance answers. Without a
// replica no answer carries it, and there is nothing to wait for.
const ConsistencyTokenHeader = "Memory-Consistency-Token"

// consistencyTokens puts the token a request brings in its context, for
// the store's reads (mentor.ReadAfter), and names, in the answer's header,
// where the request's writes left the database (mentor.Wrote), set just
// before the answer's headers go out, whatever route, error or stream
// writes them. A token the server could not have given is refused with a
// 400 on every signed-in route, with or without a replica, so a client's
// mistake shows the same everywhere; an empty one counts as none.
func consistencyTokens() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			readAfter, err := tokenSent(req.Header.Get(ConsistencyTokenHeader))
			if err != nil {
				return err
			}
			ctx, written := mentor.WithConsistency(req.Context(), readAfter)
			c.SetRequest(req.WithContext(ctx))
			res := c.Response()
			res.Before(func() {
				if at, wrote := written(); wrote {
					res.Header().Set(ConsistencyTokenHeader, at.String())
				}
			})
			return next(c)
		}
	}
}

// tokenSent reads the token a request brings: zero when none (or empty).
func tokenSent(header string) (mentor.WritePosition, error) {
	sent := strings.TrimSpace(header)
	if sent == "" {
		return 0, nil
	}
	at, err := mentor.ParseWritePosition(sent)
	if err != nil {
		return 0, mentor.Errorf(mentor.CodeInvalid,
			"%s is not a token this service gave: send the newest one an answer carried, as it came", ConsistencyTokenHeader)
	}
	return at, nil
}
