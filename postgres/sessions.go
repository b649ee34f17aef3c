package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"mentormemory/memory"
)

// liveSessionSQL finds the conversation's live session: not ended, and
// active within the idle limit ($3, seconds). $1 facilitator, $2 learner key.
const liveSessionSQL = `select id::text, exchanges, last_message from public.mentor_sessions
	where ` + sameConversation + ` and ended_at is null
		and last_activity_at > now() - make_interval(secs => $3)`

func (s *Store) LiveSession(ctx context.Context, learnerID *string) (memory.SessionState, error) {
	var state memory.SessionState
	err := s.read(ctx, func(b *pgx.Batch, me string) {
		b.Queue(liveSessionSQL, me, learnerKey(learnerID), memory.SessionIdleLimit.Seconds())
	}, func(br pgx.BatchResults) error {
		var id string
		err := br.QueryRow().Scan(&id, &state.Exchanges, &state.PreviousMessage)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	return state, err
}
