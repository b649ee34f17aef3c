package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/mentor"
)

// Identity reports, through the write path (inTx) and the read path (read),
// the role and auth.uid() the caller's statements run with.
func (s *Store) Identity(ctx context.Context) (write, read [2]string, err error) {
	const who = `select current_user::text, coalesce(auth.uid()::text, '')`
	err = s.inTx(ctx, func(tx pgx.Tx, _ string) error {
		return tx.QueryRow(ctx, who).Scan(&write[0], &write[1])
	})
	if err != nil {
		return
	}
	err = s.read(ctx, nil, func(b *pgx.Batch, _ string) { b.Queue(who) },
		func(br pgx.BatchResults) error { return br.QueryRow().Scan(&read[0], &read[1]) })
	return
}

// OpeningMemoryIDs runs the opening's memory query for a conversation and
// returns the ids and importances it reads, in order.
func OpeningMemoryIDs(ctx context.Context, db *pgxpool.Pool, facilitator, learner, endedSession string) (ids []string, importance []float64, err error) {
	rows, err := db.Query(ctx, openingMemoriesSQL, facilitator, learner, openingMemories, endedSession)
	if err != nil {
		return nil, nil, err
	}
	found, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (mentor.LearnerMemory, error) { return scanMemory(row) })
	for _, m := range found {
		ids = append(ids, m.ID)
		importance = append(importance, m.Importance)
	}
	return ids, importance, err
}

// OpeningMemories is how many memories an opening is built from.
const OpeningMemories = openingMemories

// StoredClientTurnsSQL is the lookup of resent turns by client id.
const StoredClientTurnsSQL = storedClientTurnsSQL

// ConnPID is the server process of h's connection; 0 when it has none.
func (h *Health) ConnPID() uint32 {
	if h.conn == nil {
		return 0
	}
	return h.conn.PgConn().PID()
}

// HasActiveTurnsSQL is the clear's check for turns in the active segment.
var HasActiveTurnsSQL = hasActiveTurnsSQL

// ArchiveTurnsSQL is the read of a page of an archived conversation's
// turns.
const ArchiveTurnsSQL = archiveTurnsSQL

// SearchSQL is the ranking statement, and CandidateBudget the most
// archived conversations it reads to rank (its last parameter).
var SearchSQL = searchSQL

const CandidateBudget = candidateBudget

// MigrateThrough migrates the database as Migrate does, but only through
// the migration version, as an earlier release left it.
func MigrateThrough(ctx context.Context, pool *pgxpool.Pool, version string) error {
	_, _, err := migrateOnCitus(ctx, pool, version)
	return err
}
