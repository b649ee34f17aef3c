package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
)

const conversationColumns = `id::text, learner_id::text, coalesce(summary, ''), summary_stale,
	summarized_turn_id, turn_count, recent_turns, created_at, updated_at`

func scanConversation(row pgx.Row) (mentor.ConversationRecord, error) {
	var c mentor.ConversationRecord
	var recent []byte
	err := row.Scan(&c.ID, &c.LearnerID, &c.Summary, &c.SummaryStale, &c.SummarizedTurnID,
		&c.TurnCount, &recent, &c.CreatedAt, &c.UpdatedAt)
	c.RecentTurns = mentor.TurnsJSON(recent)
	return c, err
}

func (s *Store) GetConversation(ctx context.Context, learnerID *string) (*mentor.ConversationRecord, error) {
	var conv *mentor.ConversationRecord
	err := s.read(ctx, learnerID, func(b *pgx.Batch, me string) {
		b.Queue(`select `+conversationColumns+` from public.conversation_updates where `+sameConversation,
			me, learnerKey(learnerID))
	}, func(br pgx.BatchResults) error {
		c, err := scanConversation(br.QueryRow())
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		conv = &c
		return err
	})
	return conv, err
}

// archiveSQL reads one of the caller's ($1) archived conversations ($2);
// RLS hides everyone else's.
const archiveSQL = `select id::text, learner_id::text, coalesce(summary, ''), turn_count, archived_at
	from public.conversation_history_archive where facilitator_id = $1::uuid and id = $2::uuid`

// archiveTurnsSQL reads a page of an archived conversation's ($2) turns,
// in the order they were said: $3 of them from offset $4, as a JSON array,
// and whether another page follows. The page is read with one turn more
// than it holds, and that turn only says whether there is more. The turns
// an archive holds (migration 0037) are read in two halves, each in order
// from an index of its own and cut to the page's end: those linked to it,
// and, of those linked to none, the ones of its conversation in its range
// of log ids.
const archiveTurnsSQL = `select coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object('id', p.client_turn_id,
		'role', p.role, 'content', p.content, 'created_at', p.created_at)) order by p.id)
		filter (where p.n <= $3::int), '[]'::jsonb),
	count(*) > $3::int
from (
	select t.*, row_number() over (order by t.id) as n
	from (
		select * from (
			(select id, client_turn_id, role, content, created_at from public.conversation_turns
				where facilitator_id = $1::uuid and archive_id = $2::uuid
				order by id limit $3::int + 1 + $4::int)
			union all
			(select t.id, t.client_turn_id, t.role, t.content, t.created_at
				from public.conversation_history_archive a
				-- The archive first, then its conversation's turns in its range,
				-- in order, through the view of the caller's turns (as
				-- archivedTurns), whose index of a conversation's turns the
				-- planner may use under row-level security.
				cross join lateral (
					select t.id, t.client_turn_id, t.role, t.content, t.created_at
					from private.caller_turns t
					where t.facilitator_id = $1::uuid and t.archive_id is null
						and coalesce(t.learner_id, '` + nilLearner + `'::uuid) = coalesce(a.learner_id, '` + nilLearner + `'::uuid)
						and t.id between a.first_turn_id and a.last_turn_id
					order by t.id limit $3::int + 1 + $4::int) t
				where a.facilitator_id = $1::uuid and a.id = $2::uuid
				order by t.id limit $3::int + 1 + $4::int)
		) held
		order by id limit $3::int + 1 offset $4::int
	) t
) p`

// archivedTurns is the turns archive a, of the facilitator named
// facilitator (an SQL expression), holds (migration 0037), as
// archiveTurnsSQL reads them: those linked to it, and, of those linked to
// none, the ones of its conversation in its range of log ids. (The linked
// turns' index is partial: "is not null" lets the planner use it for a
// join.) The facilitator is named, not taken from a: Citus, which must
// find every table's shard from the statement, did not follow the join
// into this union in search's statement ("complex joins are only
// supported when all distributed tables are co-located"). Both read
// through the view of the caller's turns (migration 0058): under
// row-level security the planner may not use the index of a
// conversation's turns by id for the range, and read every turn of the
// facilitator's in it, each other learner's too.
func archivedTurns(facilitator string) string {
	return `select t.id, t.client_turn_id, t.role, t.content, t.created_at, t.content_vector from private.caller_turns t
	where t.facilitator_id = ` + facilitator + ` and t.archive_id is not null and t.archive_id = a.id
	union all
	select t.id, t.client_turn_id, t.role, t.content, t.created_at, t.content_vector from private.caller_turns t
	where t.facilitator_id = ` + facilitator + ` and t.archive_id is null
		and coalesce(t.learner_id, '` + nilLearner + `'::uuid) = coalesce(a.learner_id, '` + nilLearner + `'::uuid)
		and t.id between a.first_turn_id and a.last_turn_id`
}

// activeTurn is the condition that the turn named turn, of the
// conversation of facilitator and learnerKey (SQL expressions), is in the
// active segment: linked to no archive, and above the highest range of the
// conversation's archives (migration 0037), read through the view of the
// caller's archives (migration 0060), whose index of ranges the planner
// may use for the conversation under row-level security.
func activeTurn(turn, facilitator, learnerKey string) string {
	return turn + `.archive_id is null and ` + turn + `.id > (select coalesce(max(h.last_turn_id), 0)
		from private.caller_archive_ranges h
		where h.facilitator_id = ` + facilitator + ` and coalesce(h.learner_id, '` + nilLearner + `'::uuid) = ` + learnerKey + `
			and h.last_turn_id is not null)`
}

// Archive reads the archived conversation and a page of its turns in one
// round trip.
func (s *Store) Archive(ctx context.Context, q mentor.ArchiveQuery) (mentor.ArchivedConversation, error) {
	var a mentor.ArchivedConversation
	err := s.read(ctx, nil, func(b *pgx.Batch, me string) {
		b.Queue(archiveSQL, me, q.ID)
		b.Queue(archiveTurnsSQL, me, q.ID, q.Limit, q.Offset)
	}, func(br pgx.BatchResults) error {
		err := br.QueryRow().Scan(&a.ID, &a.LearnerID, &a.Summary, &a.TurnCount, &a.ArchivedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return mentor.Errorf(mentor.CodeNotFound, "Archived conversation not found")
		}
		if err != nil {
			return err
		}
		var turns []byte
		var more bool
		if err := br.QueryRow().Scan(&turns, &more); err != nil {
			return err
		}
		a.Turns = mentor.TurnsJSON(turns)
		if more {
			a.NextOffset = new(q.Offset + q.Limit)
		}
		return nil
	})
	return a, err
}

// A post runs in three round trips once the caller is set up: the first
// reads and locks what the post works on, the second stores the new turns
// and the session and reads what the summarizer needs, the third saves the
// conversation's record. Each round trip is a pipeline of statements that
// Postgres runs one after the other in the transaction. With one statement
// per round trip a post made eleven of them, begin and commit included; it
// now makes five. On loopback the difference is small; with the database
// across a network (Supabase) each round trip saved is its latency saved on
// every post.

// opened is what a post works on: the learner's name, the conversation's
// active record and live session, both locked until the transaction ends
// so that posts to one conversation happen one at a time and counts stay
// exact, and the posted turns that are not stored yet.
type opened struct {
	learnerName string
	conv        mentor.ConversationRecord
	session     mentor.CurrentSession
	fresh       []mentor.Turn
}

// openConversation reads and locks, in one round trip, what a post works
// on. The batch first creates the conversation's record when it is missing,
// so that the record is there to lock before anything else is: posts to one
// conversation take the record's lock, then the live session's, always in
// that order. (Locking the session while the record was missing let a post
// hold the session and wait for the record while another held the record
// and waited for the session: a deadlock under parallel first posts.)
func openConversation(ctx context.Context, tx pgx.Tx, me string, learnerID *string, posted []mentor.Turn) (opened, error) {
	var o opened
	b := &pgx.Batch{}
	b.Queue(genericPlansSQL)
	if learnerID != nil {
		b.Queue(learnerNameSQL, me, *learnerID)
	}
	b.Queue(createConversationSQL, me, learnerKey(learnerID))
	b.Queue(`select `+conversationColumns+` from public.conversation_updates
		where `+sameConversation+` for update`, me, learnerKey(learnerID))
	queueStoredTurns(b, me, learnerID, posted)
	b.Queue(lockLiveSessionSQL, me, learnerKey(learnerID), mentor.SessionIdleLimit.Seconds())
	err := sendBatch(ctx, tx, b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil { // the generic plans
			return err
		}
		var err error
		if learnerID != nil {
			if o.learnerName, err = learnerName(br.QueryRow()); err != nil {
				return err
			}
		}
		if _, err := br.Exec(); err != nil {
			return err
		}
		if o.conv, err = scanConversation(br.QueryRow()); errors.Is(err, pgx.ErrNoRows) {
			return errConversationCleared
		} else if err != nil {
			return err
		}
		if o.fresh, err = readUnstoredTurns(br, posted); err != nil {
			return err
		}
		o.session, err = scanLiveSession(br.QueryRow())
		return err
	})
	return o, err
}

// genericPlansSQL makes the rest of a post's transaction run every
// statement on the plan prepared for it once per connection. Left to
// choose, Postgres planned two of them again on every post (the resent
// turns' lookup by client ids, and the summary's turns after an id),
// because a plan made for the values at hand looked cheaper than the
// generic one, which is the plan the index tests check; planning them was
// a tenth of a post's time in Postgres.
//
// Not on Citus (a database with its metadata, pg_dist_partition): Citus
// finds the shard a statement runs on by its values, so it cannot plan
// most statements without them ("could not create distributed plan"),
// and the plan that chooses the indexes is the worker's, made with them.
const genericPlansSQL = `select set_config('plan_cache_mode',
	case when to_regclass('pg_catalog.pg_dist_partition') is null then 'force_generic_plan' else 'auto' end, true)`

// createConversationSQL creates the conversation's active record ($1
// facilitator, $2 learner key) unless it exists, or the learner is not the
// caller's. The existence probe spares the usual post a speculative
// insertion; the conflict clause settles two first posts at once, the
// second waiting for the first to commit.
const createConversationSQL = `insert into public.conversation_updates (facilitator_id, learner_id)
	select $1::uuid, nullif($2::uuid, '` + nilLearner + `'::uuid)
	where not exists (select 1 from public.conversation_updates where ` + sameConversation + `)
		and ($2::uuid = '` + nilLearner + `'::uuid
			or exists (select 1 from public.learners where facilitator_id = $1::uuid and id = $2::uuid))
	on conflict on constraint conversation_updates_one_per_learner do nothing`

// errConversationCleared is openConversation's answer when a clear,
// committed between the record's creation and its lock, removed the record.
// The post then runs again from the start, in a new transaction: this one
// may hold the cleared conversation's session lock, and waiting for a lock
// while holding it could deadlock with a post of the new conversation.
var errConversationCleared = errors.New("the conversation was cleared while the post opened it")

func (s *Store) AppendTurns(ctx context.Context, req mentor.AppendRequest) (mentor.Appended, error) {
	for range 3 {
		out, err := s.appendTurns(ctx, req)
		if !errors.Is(err, errConversationCleared) {
			return out, err
		}
	}
	return mentor.Appended{}, &mentor.Error{Code: mentor.CodeUnavailable, Message: "Busy, please retry"}
}

func (s *Store) appendTurns(ctx context.Context, req mentor.AppendRequest) (mentor.Appended, error) {
	var out mentor.Appended
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		o, err := openConversation(ctx, tx, me, req.LearnerID, req.Turns)
		if err != nil {
			return err
		}
		added := o.fresh
		if o.session.EndsBefore(added) {
			if _, err := s.endSession(ctx, tx, me, req.LearnerID, o.learnerName, o.session.ID, mentor.EndedIdle); err != nil {
				return err
			}
			o.session = mentor.CurrentSession{}
		}

		b := &pgx.Batch{}
		// The new turns count against the day's quota in the round trip
		// that inserts them; resent turns are not new and cost nothing.
		turnsCharge, chargeTurns := s.limits.Charge(mentor.TurnsStored, int64(len(added)))
		if len(added) > 0 {
			if chargeTurns {
				queueCharge(b, turnsCharge)
			}
			queueInsertTurns(b, me, req.LearnerID, added)
			session := mentor.AdvanceSession(o.session, added, o.learnerName, uuid.NewString)
			if err := queueSessionWrite(b, me, req.LearnerID, session); err != nil {
				return err
			}
			if s.closingWords {
				args, err := closingJobArgs(me, req.LearnerID, session.Closing, false)
				if err != nil {
					return err
				}
				b.Queue(closingJobSQL, args...)
			}
			out.SessionID = session.ID
		}
		// Queued after the insert, so the new turns are among those read.
		queueSummaryTurns(b, me, req.LearnerID, o.conv, mentor.SummaryFromScratch(o.conv, req.Regenerate))
		// The other learners' names are hidden from a model's prompt; the
		// offline summarizer sends none.
		readNames := s.inlineSummarizer == nil
		if readNames {
			b.Queue(otherLearnerNamesSQL, me, learnerKey(req.LearnerID))
		}
		var stored turnRange
		var summaryTurns []mentor.StoredTurn
		var otherNames []string
		if err := sendBatch(ctx, tx, b, func(br pgx.BatchResults) error {
			if len(added) > 0 {
				if chargeTurns {
					if _, err := br.Exec(); err != nil {
						return err
					}
				}
				var err error
				if added, stored, err = readInsertedTurns(br, added); err != nil {
					return err
				}
				if _, err := br.Exec(); err != nil { // the session's write
					return err
				}
				if s.closingWords {
					if _, err := br.Exec(); err != nil { // the writing of its closing words
						return err
					}
				}
			}
			var err error
			if summaryTurns, err = readSummaryTurns(br); err != nil || !readNames {
				return err
			}
			return br.QueryRow().Scan(&otherNames)
		}); err != nil {
			return err
		}
		// Queued with the turns, so an accepted exchange is learnt from
		// even if the server stops right after answering.
		if s.extraction && slices.ContainsFunc(added, func(t mentor.Turn) bool { return t.Role == mentor.RoleUser }) {
			queued, err := enqueueExtraction(ctx, tx, me, req.LearnerID, out.SessionID, stored)
			if err != nil {
				return err
			}
			out.Queued = queued
		}
		job := mentor.PlanSummary(o.conv, req.Regenerate, summaryTurns, o.learnerName, otherNames)
		// A summary the store can write itself, from a little text, is saved
		// by the same update, in the same transaction; any other is the
		// service's to ask for once the turns are committed.
		var inline *mentor.InlineSummary
		if job != nil && s.inlineSummarizer != nil && job.FitsInline() {
			summary, err := s.inlineSummarizer.Summarize(ctx, job.Request)
			inline = &mentor.InlineSummary{Job: *job, Summary: summary, Err: err}
			out.SummaryErr = err
		} else {
			out.Job = job
		}
		out.Added = len(added)

		update, changed, err := mentor.UpdateRecord(o.conv, added, inline)
		if err != nil {
			return err
		}
		if !changed {
			out.Conversation = o.conv
			return nil
		}
		// The search vector grows by the new turns only, whose vectors the
		// insert stored with them (concatenated, not parsed again);
		// archiving, which the update may trigger, rebuilds it. When the
		// segment's text passes its byte limit (migration 0016) archiving
		// is certain, and the vector is not built past what Postgres can
		// hold. The update answers only what the database decides: the
		// rest of the record is what this post wrote.
		var turnCount int
		var updatedAt time.Time
		if err := tx.QueryRow(ctx, recordUpdateSQL,
			me, o.conv.ID, update.AddedTurns, string(update.RecentTurns), update.AddedBytes,
			update.Summary, update.SummarizedTurnID, update.MarkStale,
			timeOrNull(update.FirstTurnAt), timeOrNull(update.LastTurnAt),
			stored.first, stored.last, learnerKey(req.LearnerID)).Scan(&turnCount, &updatedAt); err != nil {
			return err
		}
		out.Archived = turnCount < o.conv.TurnCount+update.AddedTurns
		out.Conversation = update.Applied(o.conv, turnCount, updatedAt)
		return nil
	})
	return out, err
}

// recordUpdateSQL writes a post's mentor.RecordUpdate to the conversation's
// record ($1 facilitator, $2 conversation): $3 turns of $5 bytes added, $4
// the recent turns, $6 the summary written (null: none), $7 the turn it
// covers through, $8 whether the summarizer failed, $9 and $10 the span of
// the added turns' times; $11..$12 the log ids of the added turns, in the
// conversation $13 (learner key), whose stored vectors extend the record's.
const recordUpdateSQL = `update public.conversation_updates
	set turn_count = turn_count + $3, recent_turns = $4::jsonb, updated_at = now(),
		turns_bytes = turns_bytes + $5,
		turns_vector = case when turns_bytes + $5 > public.segment_byte_limit() then ''::tsvector
			else turns_vector || coalesce((select public.tsvector_agg(t.content_vector order by t.id)
				from public.conversation_turns t
				where t.facilitator_id = $1::uuid and t.id between $11 and $12
					and coalesce(t.learner_id, '` + nilLearner + `'::uuid) = $13::uuid), ''::tsvector) end,
		summary = coalesce($6, summary),
		summary_stale = case when $6::text is null then summary_stale or $8 else false end,
		summarized_turn_id = case when $6::text is null then summarized_turn_id else $7 end,
		first_turn_at = least(first_turn_at, $9), last_turn_at = greatest(last_turn_at, $10)
	where facilitator_id = $1::uuid and id = $2::uuid
	returning turn_count, updated_at`

// timeOrNull is t for a statement, NULL when it is the zero time.
func timeOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// storedClientTurnsSQL finds the stored turns of a conversation ($1
// facilitator, $2 learner or null) that carry one of the client ids $3.
// It is probed through conversation_turns_owner_client_id, one probe per id;
// the learner is compared with "is not distinct from" so that no index on
// the conversation tempts the planner into reading all its turns.
const storedClientTurnsSQL = `select client_turn_id, role, content from public.conversation_turns
	where facilitator_id = $1::uuid and client_turn_id is not null and client_turn_id = any($3::text[])
		and learner_id is not distinct from $2::uuid`

// queueStoredTurns queues the lookup of the posted turns that are stored
// already (see mentor.HaveClientIDs): by client id when every turn has one,
// otherwise the latest stored turns. readUnstoredTurns reads it and returns
// the turns that are new.
func queueStoredTurns(b *pgx.Batch, me string, learnerID *string, posted []mentor.Turn) {
	if !mentor.HaveClientIDs(posted) {
		b.Queue(`select role, content from public.conversation_turns
			where `+sameConversation+` order by id desc limit $3`, me, learnerKey(learnerID), len(posted))
		return
	}
	ids := make([]string, len(posted))
	for i, t := range posted {
		ids[i] = t.ID
	}
	b.Queue(storedClientTurnsSQL, me, learnerID, ids)
}

func readUnstoredTurns(br pgx.BatchResults, posted []mentor.Turn) ([]mentor.Turn, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	if !mentor.HaveClientIDs(posted) {
		latest, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (mentor.Turn, error) {
			var t mentor.Turn
			return t, row.Scan(&t.Role, &t.Content)
		})
		if err != nil {
			return nil, err
		}
		slices.Reverse(latest)
		return mentor.UnstoredAfter(latest, posted), nil
	}
	stored, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (mentor.Turn, error) {
		var t mentor.Turn
		return t, row.Scan(&t.ID, &t.Role, &t.Content)
	})
	if err != nil {
		return nil, err
	}
	return mentor.UnstoredByID(posted, stored), nil
}

// queueInsertTurns queues the appending of turns to the log, each at the
// time it carries or, without one, the transaction's; readInsertedTurns
// returns them with their times, and the log ids of the first and last of
// them.
func queueInsertTurns(b *pgx.Batch, me string, learnerID *string, turns []mentor.Turn) {
	roles := make([]string, len(turns))
	contents := make([]string, len(turns))
	ids := make([]string, len(turns))
	times := make([]*time.Time, len(turns))
	for i, t := range turns {
		roles[i], contents[i], ids[i], times[i] = t.Role, t.Content, t.ID, timeOrNull(t.CreatedAt)
	}
	b.Queue(`with added as (
			insert into public.conversation_turns (facilitator_id, learner_id, role, content, client_turn_id, created_at)
			select $1::uuid, $2::uuid, t.role, t.content, nullif(t.client_id, ''), coalesce(t.created_at, now())
			from unnest($3::text[], $4::text[], $5::text[], $6::timestamptz[]) with ordinality as t(role, content, client_id, created_at, n)
			order by t.n
			returning id, created_at)
		select array_agg(created_at order by id), min(id), max(id) from added`,
		me, learnerID, roles, contents, ids, times)
}

func readInsertedTurns(br pgx.BatchResults, turns []mentor.Turn) ([]mentor.Turn, turnRange, error) {
	var times []time.Time
	var stored turnRange
	if err := br.QueryRow().Scan(&times, &stored.first, &stored.last); err != nil {
		return nil, stored, err
	}
	if len(times) != len(turns) {
		return nil, stored, fmt.Errorf("stored %d turns of %d", len(times), len(turns))
	}
	added := slices.Clone(turns)
	for i := range added {
		added[i].CreatedAt = times[i]
	}
	return added, stored, nil
}

// turnRange is the log ids of a run of stored turns.
type turnRange struct{ first, last int64 }

// queueSummaryTurns queues the reading of the turns the summarizer is
// given (see mentor.PlanSummary): the whole active segment when the summary
// is written from scratch, otherwise only the turns it does not cover yet,
// which also catches up after a model failure; the latest
// mentor.SummaryTurnsMax of them either way. readSummaryTurns reads them.
func queueSummaryTurns(b *pgx.Batch, me string, learnerID *string, conv mentor.ConversationRecord, fromScratch bool) {
	query := `select id, role, content, coalesce(client_turn_id, ''), created_at
		from public.conversation_turns where ` + sameConversation + ` and id > $3
		order by id desc limit $4`
	after := conv.SummarizedTurnID
	if fromScratch {
		query = `select id, role, content, coalesce(client_turn_id, ''), created_at
			from public.conversation_turns t where ` + sameConversation + ` and ` + activeTurn("t", "$1::uuid", "$2::uuid") + `
				and id > $3
			order by id desc limit $4`
		after = 0
	}
	b.Queue(query, me, learnerKey(learnerID), after, mentor.SummaryTurnsMax)
}

// readSummaryTurns returns the turns queueSummaryTurns read, oldest first.
func readSummaryTurns(br pgx.BatchResults) ([]mentor.StoredTurn, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	var turns []mentor.StoredTurn
	var t mentor.StoredTurn
	if _, err := pgx.ForEachRow(rows, []any{&t.LogID, &t.Role, &t.Content, &t.ID, &t.CreatedAt}, func() error {
		turns = append(turns, t)
		return nil
	}); err != nil {
		return nil, err
	}
	slices.Reverse(turns)
	return turns, nil
}

func (s *Store) SaveSummary(ctx context.Context, job mentor.SummaryJob, summary string) (mentor.ConversationRecord, error) {
	return s.updateSummaryState(ctx, job, `update public.conversation_updates
		set summary = $4, summary_stale = false, summarized_turn_id = $3, updated_at = now()
		where facilitator_id = $1::uuid and id = $2::uuid and summarized_turn_id <= $3
		returning `+conversationColumns, summary)
}

func (s *Store) MarkSummaryStale(ctx context.Context, job mentor.SummaryJob) (mentor.ConversationRecord, error) {
	return s.updateSummaryState(ctx, job, `update public.conversation_updates
		set summary_stale = true
		where facilitator_id = $1::uuid and id = $2::uuid and summarized_turn_id < $3
		returning `+conversationColumns)
}

// updateSummaryState runs one of the summary updates ($1 facilitator, $2
// conversation, $3 the turn the summary covers through, then extra), which
// change nothing when a newer summary was saved meanwhile; it then returns
// the record as it stands.
func (s *Store) updateSummaryState(ctx context.Context, job mentor.SummaryJob, update string, extra ...any) (mentor.ConversationRecord, error) {
	var conv mentor.ConversationRecord
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		var err error
		args := append([]any{me, job.ConversationID, job.ThroughTurnID}, extra...)
		conv, err = scanConversation(tx.QueryRow(ctx, update, args...))
		if errors.Is(err, pgx.ErrNoRows) {
			conv, err = scanConversation(tx.QueryRow(ctx, `select `+conversationColumns+
				` from public.conversation_updates where facilitator_id = $1::uuid and id = $2::uuid`,
				me, job.ConversationID))
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return mentor.Errorf(mentor.CodeNotFound, "Conversation was cleared meanwhile")
		}
		return err
	})
	return conv, err
}

// hasActiveTurnsSQL tells whether the conversation of facilitator $1 and
// learner key $2 has turns in its active segment. It reads through the
// view of the caller's turns (migration 0058), whose index of a
// conversation's turns the planner may use under row-level security,
// rather than the facilitator's every turn above the conversation's
// archives.
var hasActiveTurnsSQL = `select exists (select 1 from private.caller_turns t
	where ` + sameConversation + ` and ` + activeTurn("t", "$1::uuid", "$2::uuid") + `)`

// ClearConversation archives the active segment and removes the active
// conversation; nothing said is lost, and the archive stays searchable.
// The next session's opening starts afresh (startAfresh), whether or not
// there was anything to archive.
func (s *Store) ClearConversation(ctx context.Context, learnerID *string) (bool, error) {
	var archived bool
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		if _, err := requireLearner(ctx, tx, me, learnerID); err != nil {
			return err
		}
		var id string
		err := tx.QueryRow(ctx, `select id::text from public.conversation_updates
			where `+sameConversation+` for update`, me, learnerKey(learnerID)).Scan(&id)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			if err := tx.QueryRow(ctx, hasActiveTurnsSQL, me, learnerKey(learnerID)).Scan(&archived); err != nil {
				return err
			}
			// The delete trigger moves the active turns to the archive first.
			if _, err := tx.Exec(ctx, `delete from public.conversation_updates
				where facilitator_id = $1::uuid and id = $2::uuid`, me, id); err != nil {
				return err
			}
		}
		return startAfresh(ctx, tx, me, learnerID)
	})
	return archived, err
}
