package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// healthTimeout bounds one health check, a new connection included: a
// probe that waits longer has given up anyway (Kubernetes' waits 1 s by
// default), and the checks queue behind one another.
const healthTimeout = 5 * time.Second

// Health tells whether the database answers, on a connection of its own.
// Through the pool, a facilitator's burst of posts holding every
// connection made /healthz wait and answer 503 with the database
// perfectly well; requests cannot take this connection.
type Health struct {
	config *pgx.ConnConfig
	turn   chan struct{} // held by the check using conn
	conn   *pgx.Conn     // nil before the first check and after a failed one
}

// NewHealth checks the database pool connects to, with the same settings.
// It connects at the first check, so a process that is never asked opens
// no connection for it.
func NewHealth(pool *pgxpool.Pool) *Health {
	return &Health{config: pool.Config().ConnConfig, turn: make(chan struct{}, 1)}
}

// Ping reports whether the database answers: nil, or the 503 of an
// unreachable database. A connection that fails is closed and a new one
// tried at once, since the database may have restarted since the last
// check and be answering again.
func (h *Health) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	select {
	case h.turn <- struct{}{}:
	case <-ctx.Done():
		return dbError(ctx.Err())
	}
	defer func() { <-h.turn }()
	if h.conn != nil {
		if h.conn.Ping(ctx) == nil {
			return nil
		}
		h.closeConn(ctx)
	}
	conn, err := pgx.ConnectConfig(ctx, h.config)
	if err != nil {
		return dbError(err)
	}
	h.conn = conn
	return nil
}

// Close closes the connection, once a check in progress is done.
func (h *Health) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	defer cancel()
	h.turn <- struct{}{}
	defer func() { <-h.turn }()
	if h.conn != nil {
		h.closeConn(ctx)
	}
}

// closeConn closes the connection whatever state it is in: the socket is
// closed even when the goodbye cannot be sent before ctx ends.
func (h *Health) closeConn(ctx context.Context) {
	_ = h.conn.Close(ctx)
	h.conn = nil
}
