package mentor

import (
	"context"
	"time"
)

// What an erasure covers.
const (
	ErasureOfLearner = "learner"
	ErasureOfAccount = "account"
)

// Erasures listed at a time.
const (
	DefaultErasureList = 20
	MaxErasureList     = 100
)

// Erasure is the receipt of an erasure: who erased, what (a learner, or
// the whole account), when, and how many rows went from each table. It
// holds nothing of what was said, so keeping it keeps no trace.
type Erasure struct {
	FacilitatorID string `json:"facilitator_id"`
	Scope         string `json:"scope"`
	// LearnerID is the erased learner; nil for an account.
	LearnerID *string          `json:"learner_id"`
	ErasedAt  time.Time        `json:"erased_at"`
	Removed   map[string]int64 `json:"removed"`
}

// EraseLearner removes the learner and everything derived from what was
// said about them, and returns the receipt, which the facilitator can read
// until the account is erased.
func (s *Service) EraseLearner(ctx context.Context, learnerID string) (Erasure, error) {
	e, err := s.store.EraseLearner(ctx, learnerID)
	if err == nil {
		s.logErasure(e)
	}
	return e, err
}

// EraseAccount removes everything of the caller's, the receipts of earlier
// erasures included, and returns the receipt of this one, which is not
// kept. The user in Supabase Auth stays: deleting it is Supabase's (and
// removes whatever was written after).
func (s *Service) EraseAccount(ctx context.Context) (Erasure, error) {
	e, err := s.store.EraseAccount(ctx)
	if err == nil {
		s.logErasure(e)
	}
	return e, err
}

// Erasures lists the caller's receipts, newest first.
func (s *Service) Erasures(ctx context.Context, limit int) ([]Erasure, error) {
	limit, err := pageLimit(limit, DefaultErasureList, MaxErasureList)
	if err != nil {
		return nil, err
	}
	return s.store.ListErasures(ctx, limit)
}

// logErasure is the service's own record of an erasure, the only one left
// of an account's: ids and counts, never content.
func (s *Service) logErasure(e Erasure) {
	s.log.Info("erased", "facilitator_id", e.FacilitatorID, "scope", e.Scope, "learner_id", e.LearnerID, "removed", e.Removed)
}
