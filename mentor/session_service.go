package mentor

import (
	"context"
	"time"
)

// EndSession ends the conversation's live session at the client's request.
// It answers from the closing state kept current after every exchange, and
// stores the next session's opening before it returns.
func (s *Service) EndSession(ctx context.Context, learnerID *string) (Ended, error) {
	ended, err := s.store.EndSession(ctx, learnerID, EndedByClient)
	ended.Opening = ended.Opening.Greet(facilitatorName(ctx))
	return ended, err
}

// OpeningContext returns the precomputed opening of the next session with
// the things personally relevant on day, greeting the facilitator by name,
// or nil when no session has ended yet. It makes no model call.
func (s *Service) OpeningContext(ctx context.Context, learnerID *string, day time.Time) (*Opening, error) {
	opening, err := s.store.Opening(ctx, learnerID)
	if err != nil || opening == nil {
		return nil, err
	}
	forDay := opening.ForDay(day).Greet(facilitatorName(ctx))
	return &forDay, nil
}

// facilitatorName is the caller's first name, or "" (Caller.FirstName).
func facilitatorName(ctx context.Context) string {
	caller, _ := CallerFrom(ctx)
	return caller.FirstName()
}
