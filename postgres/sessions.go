package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
)

// liveSessionSQL finds the conversation's live session: not ended, and
// active within the idle limit ($3, seconds). $1 facilitator, $2 learner key.
const liveSessionSQL = `select id::text, exchanges, last_message from public.mentor_sessions
	where ` + sameConversation + ` and ended_at is null
		and last_activity_at > now() - make_interval(secs => $3)`

func (s *Store) LiveSession(ctx context.Context, learnerID *string) (mentor.SessionState, error) {
	var state mentor.SessionState
	err := s.read(ctx, learnerID, func(b *pgx.Batch, me string) {
		b.Queue(liveSessionSQL, me, learnerKey(learnerID), mentor.SessionIdleLimit.Seconds())
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

// lockLiveSessionSQL locks the conversation's live session, if any, and
// says whether it has been idle past the limit ($3, seconds). $1
// facilitator, $2 learner key.
const lockLiveSessionSQL = `select id::text, closing, last_activity_at <= now() - make_interval(secs => $3)
	from public.mentor_sessions where ` + sameConversation + ` and ended_at is null for update`

// scanLiveSession reads the result of lockLiveSessionSQL.
func scanLiveSession(row pgx.Row) (mentor.CurrentSession, error) {
	var s mentor.CurrentSession
	err := row.Scan(&s.ID, &s.Closing, &s.Idle)
	if errors.Is(err, pgx.ErrNoRows) {
		return mentor.CurrentSession{}, nil
	}
	return s, err
}

// queueSessionWrite queues the writing of the conversation's live session
// after a post: the session is written with its closing state in one
// statement, inserted when the post starts it.
func queueSessionWrite(b *pgx.Batch, me string, learnerID *string, w mentor.SessionWrite) error {
	closing, err := json.Marshal(w.Closing)
	if err != nil {
		return err
	}
	if w.Started {
		b.Queue(`insert into public.mentor_sessions (facilitator_id, id, exchanges, last_message, closing, learner_id)
			values ($1::uuid, $2::uuid, $3, $4, $5::jsonb, $6::uuid)`,
			me, w.ID, w.Closing.Exchanges, w.LastExchange, string(closing), learnerID)
		return nil
	}
	b.Queue(`update public.mentor_sessions
		set exchanges = $3, last_message = coalesce(nullif($4, ''), last_message),
			last_activity_at = now(), closing = $5::jsonb
		where facilitator_id = $1::uuid and id = $2::uuid`,
		me, w.ID, w.Closing.Exchanges, w.LastExchange, string(closing))
	return nil
}

// EndSession ends the conversation's live session and answers from its
// closing state; the next session's opening is stored before it returns.
func (s *Store) EndSession(ctx context.Context, learnerID *string, reason string) (mentor.Ended, error) {
	var ended mentor.Ended
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		learnerName, err := requireLearner(ctx, tx, me, learnerID)
		if err != nil {
			return err
		}
		var id string
		err = tx.QueryRow(ctx, `select id::text from public.mentor_sessions
			where `+sameConversation+` and ended_at is null for update`, me, learnerKey(learnerID)).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return mentor.Errorf(mentor.CodeNotFound, "No live session to end")
		}
		if err != nil {
			return err
		}
		ended, err = s.endSession(ctx, tx, me, learnerID, learnerName, id, reason)
		return err
	})
	return ended, err
}

func (s *Store) endSession(ctx context.Context, tx pgx.Tx, me string, learnerID *string, learnerName, id, reason string) (mentor.Ended, error) {
	ended := mentor.Ended{SessionID: id, Reason: reason}
	var closingJSON []byte
	var startedAt time.Time
	if err := tx.QueryRow(ctx, `update public.mentor_sessions set ended_at = now(), end_reason = $3
		where facilitator_id = $1::uuid and id = $2::uuid returning closing, started_at, ended_at`,
		me, id, reason).Scan(&closingJSON, &startedAt, &ended.EndedAt); err != nil {
		return ended, err
	}
	if err := json.Unmarshal(closingJSON, &ended.Closing); err != nil {
		return ended, err
	}
	ended.Closing.SessionID = id
	if _, err := tx.Exec(ctx, `update public.mentor_sessions set summary = $3
		where facilitator_id = $1::uuid and id = $2::uuid`,
		me, id, mentor.SummarizeSession(ended.Closing, startedAt, ended.EndedAt)); err != nil {
		return ended, err
	}
	// The model's summary, if one writes it, replaces the template later.
	if err := s.queueClosingWords(ctx, tx, me, learnerID, ended.Closing, true); err != nil {
		return ended, err
	}
	// What the session taught is consolidated a little later (sessions
	// ending close together share the run).
	// With learning off there is nothing to consolidate.
	if learnerID != nil {
		if _, err := queueConsolidation(ctx, tx, me, *learnerID, mentor.TriggerSessionEnd, sessionEndConsolidationDelay); err != nil && !errors.Is(err, mentor.ErrLearningOff) {
			return ended, err
		}
	}
	opening, err := storeOpening(ctx, tx, me, learnerID, learnerName, ended.Closing, ended.EndedAt)
	ended.Opening = opening.ForDay(ended.EndedAt)
	return ended, err
}

// openingMemories bounds the memories an opening is built from.
const openingMemories = 30

// openingMemoriesSQL picks the $3 most important personal and context
// memories of a conversation, and beside them up to openingSessionMemories
// academic ones learnt in the session $4 that ended (what it worked on,
// what the learner achieved). Each type is read in the order of the
// learner_memories_importance index and cut there, so a learner with
// hundreds of memories costs a few index pages, not a sort of them all.
const openingMemoriesSQL = `(select * from (
	(select ` + memoryColumns + ` from public.learner_memories
		where ` + sameConversation + ` and type = 'personal' and ` + recallable + `
		order by importance desc, last_seen_at desc limit $3)
	union all
	(select ` + memoryColumns + ` from public.learner_memories
		where ` + sameConversation + ` and type = 'context' and ` + recallable + `
		order by importance desc, last_seen_at desc limit $3)
) m order by importance desc, last_seen_at desc limit $3)
union all
(select ` + memoryColumns + ` from public.learner_memories
	where ` + sameConversation + ` and type = 'academic' and session_id = $4::uuid and ` + recallable + `
	order by importance desc, last_seen_at desc limit ` + openingSessionMemories + `)`

// openingSessionMemories bounds the academic memories of the ended
// session an opening reads: the most important few name its topic and
// its breakthrough.
const openingSessionMemories = "10"

// storeOpening builds the next session's opening from a closed session and
// stores it, replacing the previous one.
func storeOpening(ctx context.Context, tx pgx.Tx, me string, learnerID *string, learnerName string,
	closing mentor.ClosingState, now time.Time) (mentor.Opening, error) {
	var summary string
	err := tx.QueryRow(ctx, `select coalesce(summary, '') from public.conversation_updates where `+sameConversation,
		me, learnerKey(learnerID)).Scan(&summary)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return mentor.Opening{}, err
	}
	rows, err := tx.Query(ctx, openingMemoriesSQL, me, learnerKey(learnerID), openingMemories, closing.SessionID)
	if err != nil {
		return mentor.Opening{}, err
	}
	known, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (mentor.LearnerMemory, error) {
		return scanMemory(row)
	})
	if err != nil {
		return mentor.Opening{}, err
	}
	opening := mentor.BuildOpening(closing, summary, known, learnerName, now)
	opening.LearnerID = learnerID
	encoded, err := json.Marshal(opening)
	if err != nil {
		return opening, err
	}
	_, err = tx.Exec(ctx, `insert into public.session_openings (facilitator_id, learner_id, session_id, opening, computed_at)
		values ($1::uuid, $2::uuid, $3::uuid, $4::jsonb, $5)
		on conflict on constraint session_openings_one_per_learner
		do update set session_id = excluded.session_id, opening = excluded.opening, computed_at = excluded.computed_at`,
		me, learnerID, closing.SessionID, string(encoded), now)
	return opening, err
}

// Opening returns the stored opening of the next session, or nil, with the
// digest of the learner's last sessions as the latest consolidation kept
// it.
func (s *Store) Opening(ctx context.Context, learnerID *string) (*mentor.Opening, error) {
	var opening *mentor.Opening
	err := s.read(ctx, learnerID, func(b *pgx.Batch, me string) {
		b.Queue(`select opening, (select p.digest from public.learner_profiles p
				where p.facilitator_id = $1::uuid and p.learner_id = o.learner_id)
			from public.session_openings o where `+sameConversation, me, learnerKey(learnerID))
	}, func(br pgx.BatchResults) error {
		var raw, digest []byte
		err := br.QueryRow().Scan(&raw, &digest)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		opening = &mentor.Opening{}
		if err := json.Unmarshal(raw, opening); err != nil {
			return err
		}
		if digest != nil {
			opening.RecentSessions = &mentor.SessionDigest{}
			return json.Unmarshal(digest, opening.RecentSessions)
		}
		return nil
	})
	return opening, err
}
