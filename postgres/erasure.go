package postgres

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mentormemory/mentor"
)

// learnerNotOwned is public.erase's refusal of a learner that is not the
// caller's (no_data_found).
const learnerNotOwned = "P0002"

// EraseLearner removes the learner and everything derived from it, through
// public.erase (migration 0023), which keeps the receipt.
func (s *Store) EraseLearner(ctx context.Context, learnerID string) (mentor.Erasure, error) {
	return s.erase(ctx, mentor.ErasureOfLearner, &learnerID)
}

// EraseAccount removes everything of the caller's through public.erase.
func (s *Store) EraseAccount(ctx context.Context) (mentor.Erasure, error) {
	return s.erase(ctx, mentor.ErasureOfAccount, nil)
}

func (s *Store) erase(ctx context.Context, scope string, learnerID *string) (mentor.Erasure, error) {
	var e mentor.Erasure
	err := s.inTx(ctx, func(tx pgx.Tx, _ string) error {
		var receipt []byte
		err := tx.QueryRow(ctx, `select public.erase($1, $2::uuid)`, scope, learnerID).Scan(&receipt)
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == learnerNotOwned {
			return mentor.Errorf(mentor.CodeNotFound, "Learner not found")
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(receipt, &e)
	})
	return e, err
}

// ListErasures lists the caller's receipts, newest first.
func (s *Store) ListErasures(ctx context.Context, limit int) ([]mentor.Erasure, error) {
	erasures := []mentor.Erasure{}
	err := s.read(ctx, nil, func(b *pgx.Batch, me string) {
		b.Queue(`select facilitator_id::text, learner_id::text, erased_at, removed from public.erasure_receipts
			where facilitator_id = $1::uuid order by erased_at desc, id limit $2`, me, limit)
	}, func(br pgx.BatchResults) error {
		var err error
		erasures, err = collectRows(br, func(row pgx.CollectableRow) (mentor.Erasure, error) {
			e := mentor.Erasure{Scope: mentor.ErasureOfLearner}
			return e, row.Scan(&e.FacilitatorID, &e.LearnerID, &e.ErasedAt, &e.Removed)
		})
		return err
	})
	return erasures, err
}
