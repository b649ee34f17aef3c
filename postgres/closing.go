package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
)

// closingSettle is how long the writing of a live session's closing words
// waits after the exchange that queued it: long enough for the exchange's
// extraction to land first, which queues a writing of its own and makes
// this one's moot, so an exchange usually costs one model call, not two.
const closingSettle = 15 * time.Second

// closingJobSQL queues the writing of a session's closing words for the
// session as it stands (job kind end_session), to run after $5 seconds,
// unless learning is off for the conversation: with it off, no model reads
// the conversation in the background. The dedupe key names the session's
// state, so each state is written for once. $1 facilitator, $2 learner, $3
// dedupe key, $4 payload.
const closingJobSQL = `insert into public.memory_jobs (facilitator_id, learner_id, kind, dedupe_key, payload, run_after)
	select $1::uuid, $2::uuid, 'end_session', $3, $4::jsonb, now() + make_interval(secs => $5)
	where public.memory_learning_on($1::uuid, $2::uuid)
	on conflict (facilitator_id, kind, dedupe_key) do nothing`

type closingPayload struct {
	SessionID string `json:"session_id"`
	Exchanges int    `json:"exchanges"`
	Learnt    int    `json:"learnt"`
	Ended     bool   `json:"ended"`
}

// closingJobArgs are closingJobSQL's arguments for the session's closing
// state, live or ended.
func closingJobArgs(me string, learnerID *string, closing mentor.ClosingState, ended bool) ([]any, error) {
	p := closingPayload{SessionID: closing.SessionID, Exchanges: closing.Exchanges, Learnt: len(closing.NewMemories), Ended: ended}
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	state, settle := "live", closingSettle
	if ended {
		state, settle = "ended", 0
	}
	key := fmt.Sprintf("closing:%s:%d:%d:%s", p.SessionID, p.Exchanges, p.Learnt, state)
	return []any{me, learnerID, key, string(payload), settle.Seconds()}, nil
}

// queueClosingWords queues, in tx, the writing of the session's closing
// words when the store has a model write them.
func (s *Store) queueClosingWords(ctx context.Context, tx pgx.Tx, me string, learnerID *string, closing mentor.ClosingState, ended bool) error {
	if !s.closingWords {
		return nil
	}
	args, err := closingJobArgs(me, learnerID, closing, ended)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, closingJobSQL, args...)
	return err
}

// ClaimClosing leases the next due writing of a session's closing words,
// or returns nil when none is due. A job whose payload does not name a
// session's state is failed for good as it is claimed (see ClaimJob).
func (s *Store) ClaimClosing(ctx context.Context) (*mentor.ClosingJob, error) {
	return claim(ctx, s, "end_session", func(job mentor.Job, payload []byte) (*mentor.ClosingJob, error) {
		var p closingPayload
		if err := json.Unmarshal(payload, &p); err != nil {
			return nil, fmt.Errorf("malformed job: %w", err)
		}
		if _, err := uuid.Parse(p.SessionID); err != nil {
			return nil, errors.New("malformed job: session_id is not a uuid")
		}
		if p.Exchanges < 0 || p.Learnt < 0 {
			return nil, errors.New("malformed job: negative counts")
		}
		return &mentor.ClosingJob{Job: job, SessionID: p.SessionID, Exchanges: p.Exchanges, Learnt: p.Learnt, Ended: p.Ended}, nil
	})
}

// ClosingInput reads, as the job's facilitator, the session's closing
// state, the learner's name and the other learners'. It reports whether
// the job still describes the session, with learning on: a job that does
// not is done without asking the model.
func (s *Store) ClosingInput(ctx context.Context, job mentor.ClosingJob) (mentor.ClosingRequest, bool, error) {
	var req mentor.ClosingRequest
	current := false
	err := s.read(ctx, nil, func(b *pgx.Batch, me string) {
		b.Queue(learningOnSQL, me, job.LearnerID)
		b.Queue(`select s.closing, s.ended_at is not null, coalesce(l.name, '')
			from public.mentor_sessions s
			left join public.learners l on l.facilitator_id = s.facilitator_id and l.id = s.learner_id
			where s.facilitator_id = $1::uuid and s.id = $2::uuid`, me, job.SessionID)
		b.Queue(otherLearnerNamesSQL, me, learnerKey(job.LearnerID))
	}, func(br pgx.BatchResults) error {
		var learning, ended bool
		if err := br.QueryRow().Scan(&learning); err != nil {
			return err
		}
		err := br.QueryRow().Scan(&req.Closing, &ended, &req.LearnerName)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		current = err == nil && learning && job.Describes(req.Closing, ended)
		return br.QueryRow().Scan(&req.OtherNames)
	})
	return req, current, err
}

// CompleteClosing puts the model's words (empty ones leave their
// templates) in the session's closing state, and in its summary once it
// has ended, if the job still describes the session, and marks the job
// done, in one transaction. If the worker's lease was lost, nothing is
// stored and mentor.ErrLeaseLost is returned.
func (s *Store) CompleteClosing(ctx context.Context, job mentor.ClosingJob, words mentor.ClosingWords) error {
	return s.inTx(ctx, func(tx pgx.Tx, me string) error {
		var closing mentor.ClosingState
		var started time.Time
		var ended *time.Time
		err := tx.QueryRow(ctx, `select closing, started_at, ended_at from public.mentor_sessions
			where facilitator_id = $1::uuid and id = $2::uuid for update`, me, job.SessionID).Scan(&closing, &started, &ended)
		if errors.Is(err, pgx.ErrNoRows) {
			return markJobDone(ctx, tx, job.Job)
		}
		if err != nil {
			return err
		}
		if job.Describes(closing, ended != nil) {
			closing.SessionID = job.SessionID
			written, summary := mentor.WithClosingWords(closing, started, ended, words)
			encoded, err := json.Marshal(written)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `update public.mentor_sessions set closing = $3::jsonb, summary = coalesce($4, summary)
				where facilitator_id = $1::uuid and id = $2::uuid`, me, job.SessionID, string(encoded), summary); err != nil {
				return err
			}
		}
		return markJobDone(ctx, tx, job.Job)
	})
}
