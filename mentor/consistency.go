package mentor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// Read-your-writes across server instances. With a read replica, the
// reads that may lag go to it only once it has replayed the caller's last
// write (see the postgres package's Replica). A server process knows the
// writes it made itself; a write made on another instance is known only
// through the client, which carries a token from the answer to its write
// to its next requests. This file carries the token's position between the
// HTTP layer, which reads and writes the headers, and the store, which
// reads the position before routing a read and notes it after a write, in
// the request's context, as WithCaller carries the caller.

// WritePosition is where the store's history of writes stood after a write:
// a number that only grows as writes are made (Postgres's WAL position, in
// bytes). A reader that has replayed the history up to a position has
// every write made before it. The zero position is before every write.
type WritePosition uint64

// String writes p as Postgres writes a WAL position (pg_lsn: the high and
// low 32 bits in hexadecimal, "16/B374D848"), which an operator can compare
// with pg_last_wal_replay_lsn(); clients treat it as an opaque token.
func (p WritePosition) String() string {
	return fmt.Sprintf("%X/%X", uint32(p>>32), uint32(p))
}

// ParseWritePosition reads a position as String writes it.
func ParseWritePosition(s string) (WritePosition, error) {
	high, low, found := strings.Cut(s, "/")
	if !found || len(high) == 0 || len(high) > 8 || len(low) == 0 || len(low) > 8 {
		return 0, errors.New("not a position")
	}
	h, err := strconv.ParseUint(high, 16, 32)
	if err != nil {
		return 0, errors.New("not a position")
	}
	l, err := strconv.ParseUint(low, 16, 32)
	if err != nil {
		return 0, errors.New("not a position")
	}
	return WritePosition(h<<32 | l), nil
}

// consistency is one request's positions: the one its client has seen,
// which its reads need, and the one its writes left the store at, which
// its answer tells the client. Store calls of one request may run at once
// (the counselor reads recall, the profile and the opening together),
// hence the atomic.
type consistency struct {
	readAfter WritePosition
	written   atomic.Uint64
}

type consistencyKey struct{}

// WithConsistency returns a context whose reads need the store at or past
// readAfter (zero: no more than the server knows itself), and the function
// that says, once the store is done, where the request's writes left it:
// false when it wrote nothing, or when the position is not known (no read
// replica, so none is read).
func WithConsistency(ctx context.Context, readAfter WritePosition) (context.Context, func() (WritePosition, bool)) {
	c := &consistency{readAfter: readAfter}
	written := func() (WritePosition, bool) {
		p := c.written.Load()
		return WritePosition(p), p != 0
	}
	return context.WithValue(ctx, consistencyKey{}, c), written
}

// ReadAfter is the position the request's reads need: the one its client
// sent; zero when it sent none.
func ReadAfter(ctx context.Context) WritePosition {
	if c, ok := ctx.Value(consistencyKey{}).(*consistency); ok {
		return c.readAfter
	}
	return 0
}

// Wrote notes that a write of the request left the store at p; the
// request's answer names the furthest of its writes. Nothing is noted
// outside a request (the background worker's writes).
func Wrote(ctx context.Context, p WritePosition) {
	c, ok := ctx.Value(consistencyKey{}).(*consistency)
	if !ok {
		return
	}
	for {
		was := c.written.Load()
		if uint64(p) <= was || c.written.CompareAndSwap(was, uint64(p)) {
			return
		}
	}
}
