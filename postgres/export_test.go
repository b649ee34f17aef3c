package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
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
