package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
)

// storedChange is one element of pending_actions.changes: a memory, its
// type (kept when the memory is gone), the version it was proposed on, and
// a pending correction's new text.
type storedChange struct {
	MemoryID     string            `json:"memory_id"`
	Type         mentor.MemoryType `json:"type"`
	Version      time.Time         `json:"version"`
	ContentAfter *string           `json:"content_after,omitempty"`
}

// actionColumns reads an action (aliased a) of the caller ($1) with each
// memory it names as that memory stands: its text while the action is
// pending, none once it is decided (a confirmed change lives in the
// memory's history, which forgetting blanks). A pending action past its
// time reads as expired. The memories are the caller's, named by $1 rather
// than by the action's column: with the latter, under row-level security,
// Citus 13.2 crashes planning the statement.
const actionColumns = `a.id::text, a.kind, a.learner_id::text, coalesce(a.topic, ''),
	case when a.status = 'pending' and a.expires_at <= now() then 'expired' else a.status end,
	a.created_at, a.expires_at, a.decided_at,
	(select jsonb_agg(jsonb_build_object('memory_id', c->>'memory_id', 'type', c->>'type',
			'content_before', case when a.status = 'pending' then m.content end,
			'content_after', c->'content_after') order by n)
		from jsonb_array_elements(a.changes) with ordinality as e(c, n)
		left join public.learner_memories m on m.facilitator_id = $1::uuid and m.id = (c->>'memory_id')::uuid)`

func scanAction(row pgx.Row, extra ...any) (mentor.PendingAction, error) {
	var a mentor.PendingAction
	var changes []byte
	dest := append([]any{&a.ID, &a.Kind, &a.LearnerID, &a.Topic, &a.Status, &a.CreatedAt, &a.ExpiresAt, &a.DecidedAt, &changes}, extra...)
	if err := row.Scan(dest...); err != nil {
		return a, err
	}
	if err := json.Unmarshal(changes, &a.Changes); err != nil {
		return a, err
	}
	a.Description = a.Describe()
	return a, nil
}

// actionNotFound is the error of an action that is not the caller's.
func actionNotFound() error {
	return mentor.Errorf(mentor.CodeNotFound, "Action not found")
}

// matchTopicSQL finds the memories of one learner ($2, a learner key) of
// facilitator $1 that share a word with the topic $3: the words as
// Postgres's English stemmer reduces them, in the memory's text or its
// topic, leaving out the learner's name $4, which every memory of the
// learner may hold. $5 bounds the rows.
const matchTopicSQL = `
with words as (
	select array(select unnest(tsvector_to_array(to_tsvector('english', $3)))
		except select unnest(tsvector_to_array(to_tsvector('english', $4)))) as lexemes
)
select id::text, type, content, updated_at
from public.learner_memories, words
where ` + sameConversation + `
	and tsvector_to_array(to_tsvector('english', content || ' ' || coalesce(metadata->>'topic', ''))) && words.lexemes
order by created_at, id
limit $5`

// ProposeAction stores a pending action on the memories it names as they
// are now. It first marks the caller's actions past their time as
// expired, dropping the texts they proposed.
func (s *Store) ProposeAction(ctx context.Context, p mentor.Proposal) (mentor.PendingAction, error) {
	var action mentor.PendingAction
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		if _, err := tx.Exec(ctx, `update public.pending_actions
			set status = 'expired', decided_at = now(), changes = `+withoutProposedText+`
			where facilitator_id = $1::uuid and status = 'pending' and expires_at <= now()`, me); err != nil {
			return err
		}
		type memory struct {
			id      string
			typ     mentor.MemoryType
			content string
			version time.Time
		}
		scan := func(row pgx.CollectableRow) (memory, error) {
			var m memory
			return m, row.Scan(&m.id, &m.typ, &m.content, &m.version)
		}
		var memories []memory
		learnerID := p.LearnerID
		if p.Kind == mentor.ActionForgetTopic {
			name, err := requireLearner(ctx, tx, me, learnerID)
			if err != nil {
				return err
			}
			rows, _ := tx.Query(ctx, matchTopicSQL, me, learnerKey(learnerID), p.Topic, name, mentor.MaxActionMemories+1)
			if memories, err = pgx.CollectRows(rows, scan); err != nil {
				return err
			}
			switch {
			case len(memories) == 0:
				return mentor.Errorf(mentor.CodeNotFound, "No memory matches that topic: list the memories and forget them one by one, or name the topic in other words")
			case len(memories) > mentor.MaxActionMemories:
				return mentor.Errorf(mentor.CodeInvalid, "More than %d memories match that topic: name it more narrowly", mentor.MaxActionMemories)
			}
		} else {
			var m memory
			err := tx.QueryRow(ctx, `select id::text, type, content, updated_at, learner_id::text
				from public.learner_memories where facilitator_id = $1::uuid and id = $2::uuid`, me, p.MemoryID).
				Scan(&m.id, &m.typ, &m.content, &m.version, &learnerID)
			if errors.Is(err, pgx.ErrNoRows) {
				return mentor.Errorf(mentor.CodeNotFound, "Memory not found")
			}
			if err != nil {
				return err
			}
			memories = []memory{m}
		}

		stored := make([]storedChange, len(memories))
		action = mentor.PendingAction{Kind: p.Kind, LearnerID: learnerID, Topic: p.Topic, Changes: make([]mentor.ActionChange, len(memories))}
		for i, m := range memories {
			stored[i] = storedChange{MemoryID: m.id, Type: m.typ, Version: m.version}
			action.Changes[i] = mentor.ActionChange{MemoryID: m.id, Type: m.typ, ContentBefore: &m.content}
			if p.Kind == mentor.ActionCorrectMemory {
				stored[i].ContentAfter, action.Changes[i].ContentAfter = &p.Content, &p.Content
			}
		}
		changes, err := json.Marshal(stored)
		if err != nil {
			return err
		}
		var topic *string
		if p.Kind == mentor.ActionForgetTopic {
			topic = &p.Topic
		}
		return tx.QueryRow(ctx, `insert into public.pending_actions (facilitator_id, learner_id, kind, topic, changes, expires_at)
			values ($1::uuid, $2::uuid, $3, $4, $5::jsonb, now() + make_interval(secs => $6))
			returning id::text, status, created_at, expires_at`,
			me, learnerID, p.Kind, topic, string(changes), mentor.ActionTTL.Seconds()).
			Scan(&action.ID, &action.Status, &action.CreatedAt, &action.ExpiresAt)
	})
	action.Description = action.Describe()
	return action, err
}

// withoutProposedText is an action's changes with the texts it proposed
// dropped, for an action being decided.
const withoutProposedText = `(select jsonb_agg(c - 'content_after' order by n)
	from jsonb_array_elements(changes) with ordinality as e(c, n))`

// GetAction reads one of the caller's actions.
func (s *Store) GetAction(ctx context.Context, id string) (mentor.PendingAction, error) {
	var action mentor.PendingAction
	err := s.read(ctx, nil, func(b *pgx.Batch, me string) {
		b.Queue(`select `+actionColumns+` from public.pending_actions a where a.facilitator_id = $1::uuid and a.id = $2::uuid`, me, id)
	}, func(br pgx.BatchResults) error {
		var err error
		action, err = scanAction(br.QueryRow())
		if errors.Is(err, pgx.ErrNoRows) {
			return actionNotFound()
		}
		return err
	})
	return action, err
}

// ListActions lists the caller's actions, newest first.
func (s *Store) ListActions(ctx context.Context, q mentor.ActionQuery) ([]mentor.PendingAction, error) {
	actions := []mentor.PendingAction{}
	err := s.read(ctx, nil, func(b *pgx.Batch, me string) {
		b.Queue(`select `+actionColumns+` from public.pending_actions a
			where a.facilitator_id = $1::uuid and case $2
				when '' then true
				when 'pending' then a.status = 'pending' and a.expires_at > now()
				when 'expired' then a.status = 'expired' or a.status = 'pending' and a.expires_at <= now()
				else a.status = $2 end
			order by a.created_at desc, a.id
			limit $3`, me, q.Status, q.Limit)
	}, func(br pgx.BatchResults) error {
		var err error
		actions, err = collectRows(br, func(row pgx.CollectableRow) (mentor.PendingAction, error) {
			return scanAction(row)
		})
		return err
	})
	return actions, err
}

// DecideAction confirms or cancels a pending action in one transaction.
// The action's row is locked first, so of two confirmations at once the
// second waits and then finds it decided: it is applied once. Row-level
// security holds the same: only a pending action can be decided, and only
// one not yet expired confirmed (migration 0024).
func (s *Store) DecideAction(ctx context.Context, id string, confirm bool, embedding *mentor.Embedding) (mentor.PendingAction, error) {
	var action mentor.PendingAction
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		var raw []byte
		var live bool
		var err error
		// FOR UPDATE sees only the rows the update policy lets change:
		// pending ones. Another's, a decided or an unknown action is then
		// told apart by a plain read.
		action, err = scanAction(tx.QueryRow(ctx, `select `+actionColumns+`, a.changes, a.expires_at > now()
			from public.pending_actions a where a.facilitator_id = $1::uuid and a.id = $2::uuid
			for update of a`, me, id), &raw, &live)
		if errors.Is(err, pgx.ErrNoRows) {
			return whyUndecidable(ctx, tx, me, id)
		}
		if err != nil {
			return err
		}
		status := mentor.ActionCancelled
		if confirm {
			if !live {
				return errExpired()
			}
			var changes []storedChange
			if err := json.Unmarshal(raw, &changes); err != nil {
				return err
			}
			if err := applyAction(ctx, tx, me, action.Kind, changes, embedding); err != nil {
				return err
			}
			status = mentor.ActionConfirmed
		}
		action.Status = status
		err = tx.QueryRow(ctx, `update public.pending_actions set status = $3, decided_at = now(), changes = `+withoutProposedText+`
			where facilitator_id = $1::uuid and id = $2::uuid
			returning decided_at`, me, id, status).Scan(&action.DecidedAt)
		action.Description = action.Describe()
		return err
	})
	return action, err
}

// whyUndecidable is the error of an action that cannot be decided: not
// found, or decided already.
func whyUndecidable(ctx context.Context, tx pgx.Tx, me, id string) error {
	var status string
	err := tx.QueryRow(ctx, `select status from public.pending_actions where facilitator_id = $1::uuid and id = $2::uuid`,
		me, id).Scan(&status)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return actionNotFound()
	case err != nil:
		return err
	case status == mentor.ActionConfirmed:
		return mentor.Errorf(mentor.CodeConflict, "This action was already confirmed: it is applied only once")
	case status == mentor.ActionCancelled:
		return mentor.Errorf(mentor.CodeConflict, "This action was cancelled: ask Mr. Mentor again")
	default:
		return errExpired()
	}
}

func errExpired() error {
	return mentor.Errorf(mentor.CodeConflict, "This action expired: ask Mr. Mentor again")
}

// errChanged is the error of a confirmation whose memories changed, or
// went, since the action was proposed: the facilitator confirmed what they
// were shown, which no longer stands.
func errChanged() error {
	return mentor.Errorf(mentor.CodeConflict, "A memory this action would change has changed since it was proposed: ask Mr. Mentor again")
}

// applyAction makes the action's changes, each recorded in its memory's
// history as made from the chat; it changes nothing unless every memory is
// still as the action was proposed on.
func applyAction(ctx context.Context, tx pgx.Tx, me, kind string, changes []storedChange, embedding *mentor.Embedding) error {
	ids := make([]string, len(changes))
	versions := make([]time.Time, len(changes))
	for i, c := range changes {
		ids[i], versions[i] = c.MemoryID, c.Version
	}
	var unchanged int
	if err := tx.QueryRow(ctx, `select count(*) from public.learner_memories m
		join unnest($2::uuid[], $3::timestamptz[]) as p(id, version) on m.id = p.id and m.updated_at = p.version
		where m.facilitator_id = $1::uuid`, me, ids, versions).Scan(&unchanged); err != nil {
		return err
	}
	if unchanged != len(changes) {
		return errChanged()
	}
	if kind != mentor.ActionCorrectMemory {
		var forgotten int
		return tx.QueryRow(ctx, forgetSQL(`id = any($2::uuid[])`, mentor.ActorChat), me, ids).Scan(&forgotten)
	}
	c := changes[0]
	if c.ContentAfter == nil {
		return errChanged()
	}
	// As a person's correction through the API: the text is theirs now,
	// confirmed, and the old embedding goes unless a new one came.
	vector, model := vectorText(embedding)
	_, err := scanMemory(tx.QueryRow(ctx, `with `+memoryBefore(``)+`
		changed as (
			update public.learner_memories m set
				content = $7, confidence = $8, last_seen_at = now(),
				embedding = $9::text::extensions.vector, embedding_model = $10, updated_at = now()
			from before b
			where m.facilitator_id = $1::uuid and m.id = b.id
			returning m.*
		),`+relearntSQL+recordChangeSQL,
		me, mentor.ChangeCorrected, mentor.ActorChat, nil, nil,
		c.MemoryID, *c.ContentAfter, mentor.PersonConfidence, vector, model))
	return err
}

// FlagMemory marks a memory for review, recorded as made from the chat.
func (s *Store) FlagMemory(ctx context.Context, id string) (mentor.LearnerMemory, error) {
	var flagged mentor.LearnerMemory
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		var err error
		flagged, err = scanMemory(tx.QueryRow(ctx, `with `+memoryBefore(``)+`
			changed as (
				update public.learner_memories m set needs_review = true, updated_at = now()
				from before b
				where m.facilitator_id = $1::uuid and m.id = b.id
				returning m.*
			),`+recordChangeSQL,
			me, mentor.ChangeFlagged, mentor.ActorChat, nil, nil, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return mentor.Errorf(mentor.CodeNotFound, "Memory not found")
		}
		return err
	})
	return flagged, err
}
