package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
)

func (s *Store) ListLearners(ctx context.Context) ([]mentor.Learner, error) {
	learners := []mentor.Learner{}
	err := s.read(ctx, nil, func(b *pgx.Batch, me string) {
		b.Queue(`select id::text, name, created_at from public.learners
			where facilitator_id = $1::uuid order by created_at, name`, me)
	}, func(br pgx.BatchResults) error {
		var err error
		learners, err = collectRows(br, func(row pgx.CollectableRow) (mentor.Learner, error) {
			var l mentor.Learner
			return l, row.Scan(&l.ID, &l.Name, &l.CreatedAt)
		})
		return err
	})
	return learners, err
}

func (s *Store) CreateLearner(ctx context.Context, name string) (mentor.Learner, error) {
	var l mentor.Learner
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		// Counted in the same round trip as the insert.
		b := &pgx.Batch{}
		charge, charged := s.limits.Charge(mentor.LearnersAdded, 1)
		if charged {
			queueCharge(b, charge)
		}
		b.Queue(`insert into public.learners (facilitator_id, name)
			values ($1::uuid, $2) returning id::text, name, created_at`, me, name)
		return sendBatch(ctx, tx, b, func(br pgx.BatchResults) error {
			if charged {
				if _, err := br.Exec(); err != nil {
					return err
				}
			}
			return br.QueryRow().Scan(&l.ID, &l.Name, &l.CreatedAt)
		})
	})
	return l, err
}

// RenameLearner changes the learner's name. Row-level security keeps the
// update to the caller's own learners, so another facilitator's learner is
// not found, as one that does not exist.
func (s *Store) RenameLearner(ctx context.Context, learnerID, name string) (mentor.Learner, error) {
	var l mentor.Learner
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		err := tx.QueryRow(ctx, `update public.learners set name = $3
			where facilitator_id = $1::uuid and id = $2::uuid
			returning id::text, name, created_at`, me, learnerID, name).Scan(&l.ID, &l.Name, &l.CreatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return mentor.Errorf(mentor.CodeNotFound, "Learner not found")
		}
		return err
	})
	return l, err
}
