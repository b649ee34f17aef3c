package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
	"mentormemory/migrations"
)

// learningOnSQL says whether the facilitator $1 has learning on for the
// learner $2 (null: the general conversation), migration 0025.
const learningOnSQL = `select public.memory_learning_on($1::uuid, $2::uuid)`

// learningOn reads learningOnSQL in a transaction.
func learningOn(ctx context.Context, tx pgx.Tx, me string, learnerID *string) (bool, error) {
	var on bool
	err := tx.QueryRow(ctx, learningOnSQL, me, learnerID).Scan(&on)
	return on, err
}

// AccountSettings reads the caller's account settings; an account that
// never set any has the defaults (learning on, no retention).
func (s *Store) AccountSettings(ctx context.Context) (mentor.AccountSettings, error) {
	var settings mentor.AccountSettings
	err := s.read(ctx, nil, func(b *pgx.Batch, me string) {
		b.Queue(accountSettingsSQL, me)
	}, func(br pgx.BatchResults) error {
		return br.QueryRow().Scan(&settings.Learning, &settings.RetentionDays)
	})
	return settings, err
}

// accountSettingsSQL reads the caller's ($1) settings, the defaults when
// there are none: one row, aggregated from at most one, filtered by the
// facilitator as Citus needs to send it to one shard.
const accountSettingsSQL = `select coalesce(bool_and(s.learning), true), max(s.retention_days)
	from public.facilitator_settings s where s.facilitator_id = $1::uuid`

// ChangeAccountSettings applies the change and returns the settings as
// they then are.
func (s *Store) ChangeAccountSettings(ctx context.Context, c mentor.AccountSettingsChange) (mentor.AccountSettings, error) {
	var settings mentor.AccountSettings
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		// The time goes in with the values: Citus refuses now() in DO UPDATE.
		return tx.QueryRow(ctx, `insert into public.facilitator_settings as s (facilitator_id, learning, retention_days, updated_at)
			values ($1::uuid, coalesce($2, true), $4, now())
			on conflict (facilitator_id) do update set
				learning = coalesce($2, s.learning),
				retention_days = case when $3 then $4 else s.retention_days end,
				updated_at = excluded.updated_at
			returning learning, retention_days`,
			me, c.Learning, c.SetRetention, c.RetentionDays).Scan(&settings.Learning, &settings.RetentionDays)
	})
	return settings, err
}

// learnerSettingsSQL reads the settings of the caller's ($1) learner $2,
// and the account's, each on unless turned off. (Not by memory_learning_on:
// Citus sends this statement to the facilitator's shard, where a function
// that queries the tables again cannot run.)
const learnerSettingsSQL = `select coalesce((select learning from public.learner_settings
		where facilitator_id = $1::uuid and learner_id = $2::uuid), true),
	coalesce((select learning from public.facilitator_settings where facilitator_id = $1::uuid), true)`

// LearnerSettings reads the learner's settings; CodeNotFound for a
// learner that is not the caller's.
func (s *Store) LearnerSettings(ctx context.Context, learnerID string) (mentor.LearnerSettings, error) {
	settings := mentor.LearnerSettings{LearnerID: learnerID}
	err := s.read(ctx, &learnerID, func(b *pgx.Batch, me string) {
		b.Queue(learnerSettingsSQL, me, learnerID)
	}, func(br pgx.BatchResults) error {
		return br.QueryRow().Scan(&settings.Learning, &settings.AccountLearning)
	})
	return settings, err
}

// SetLearnerLearning turns learning on or off for the learner.
func (s *Store) SetLearnerLearning(ctx context.Context, learnerID string, learning bool) (mentor.LearnerSettings, error) {
	settings := mentor.LearnerSettings{LearnerID: learnerID}
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		if _, err := requireLearner(ctx, tx, me, &learnerID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `insert into public.learner_settings as s (facilitator_id, learner_id, learning, updated_at)
			values ($1::uuid, $2::uuid, $3, now())
			on conflict (facilitator_id, learner_id) do update set learning = $3, updated_at = excluded.updated_at`,
			me, learnerID, learning); err != nil {
			return err
		}
		return tx.QueryRow(ctx, learnerSettingsSQL, me, learnerID).Scan(&settings.Learning, &settings.AccountLearning)
	})
	return settings, err
}

// LearningNow counts the learner's extraction and consolidation jobs
// queued and running. A running job whose lease ran out waits for a
// worker to take it up again: it counts as queued.
func (s *Store) LearningNow(ctx context.Context, learnerID string) (mentor.LearningNow, error) {
	now := mentor.LearningNow{LearnerID: learnerID}
	err := s.read(ctx, &learnerID, func(b *pgx.Batch, me string) {
		// Whether learning is on, a statement of its own: Citus sends the
		// count to the facilitator's shard, where memory_learning_on,
		// which queries the tables again, cannot run.
		b.Queue(learningOnSQL, me, learnerID)
		b.Queue(`select count(*) filter (where kind = 'extract' and not held),
				count(*) filter (where kind = 'extract' and held),
				count(*) filter (where kind = 'consolidate' and not held),
				count(*) filter (where kind = 'consolidate' and held)
			from (select kind, status = 'running' and leased_until >= now() as held
				from public.memory_jobs
				where facilitator_id = $1::uuid and learner_id = $2::uuid
					and kind in ('extract', 'consolidate') and status in ('pending', 'running')) jobs`, me, learnerID)
	}, func(br pgx.BatchResults) error {
		if err := br.QueryRow().Scan(&now.Learning); err != nil {
			return err
		}
		return br.QueryRow().Scan(&now.Extracting.Queued, &now.Extracting.Running,
			&now.Consolidating.Queued, &now.Consolidating.Running)
	})
	now.Active = now.Extracting != mentor.JobCounts{} || now.Consolidating != mentor.JobCounts{}
	return now, err
}

// MemorySources lists the conversation turns the memory was learnt from,
// oldest first, each with whether its segment is archived.
func (s *Store) MemorySources(ctx context.Context, id string) (mentor.MemorySources, error) {
	sources := mentor.MemorySources{MemoryID: id}
	err := s.read(ctx, nil, func(b *pgx.Batch, me string) {
		b.Queue(`select source from public.learner_memories where facilitator_id = $1::uuid and id = $2::uuid`, me, id)
		b.Queue(`select t.id, t.role, t.content, t.created_at, `+migrations.ArchiveOf("t")+` is not null
			from public.conversation_turns t
			where t.facilitator_id = $1::uuid and t.id = any ((select source_turn_ids from public.learner_memories
				where facilitator_id = $1::uuid and id = $2::uuid)::bigint[])
			order by t.id`, me, id)
	}, func(br pgx.BatchResults) error {
		err := br.QueryRow().Scan(&sources.Source)
		if errors.Is(err, pgx.ErrNoRows) {
			return mentor.Errorf(mentor.CodeNotFound, "Memory not found")
		}
		if err != nil {
			return err
		}
		sources.Turns, err = collectRows(br, func(row pgx.CollectableRow) (mentor.SourceTurn, error) {
			var t mentor.SourceTurn
			return t, row.Scan(&t.TurnID, &t.Role, &t.Content, &t.CreatedAt, &t.Archived)
		})
		return err
	})
	if sources.Turns == nil {
		sources.Turns = []mentor.SourceTurn{}
	}
	return sources.WithNote(), err
}

// forgetSQL forgets the caller's ($1) memories that match where: they go,
// every text in their history is blanked, their text leaves the list of
// what was learnt in the session they came from, and the history records,
// without a word of them, that they were forgotten by $actor. It returns
// how many went. One statement, so no memory is forgotten without its
// record.
func forgetSQL(where, actor string) string {
	return `
	with gone as (
		delete from public.learner_memories where facilitator_id = $1::uuid and ` + where + `
		returning id, learner_id, session_id, content
	),
	unlearnt as (
		update public.mentor_sessions s set closing = jsonb_set(s.closing, '{new_memories}', coalesce((
			select jsonb_agg(x.e order by x.i)
			from jsonb_array_elements(s.closing->'new_memories') with ordinality as x(e, i)
			where not exists (select 1 from gone g where g.session_id = s.id and to_jsonb(g.content) = x.e)), '[]'::jsonb))
		where s.facilitator_id = $1::uuid and s.id in (select session_id from gone)
			and jsonb_typeof(s.closing->'new_memories') = 'array'
	),
	blanked as (
		update public.memory_history h set content_before = null, content_after = null
		from gone g
		where h.facilitator_id = $1::uuid and h.memory_id = g.id
			and (h.content_before is not null or h.content_after is not null)
	),
	-- Returning, as recordChangeSQL's, for Citus.
	history as (
		insert into public.memory_history (facilitator_id, memory_id, learner_id, change, actor, session_id)
		select $1::uuid, id, learner_id, '` + mentor.ChangeForgotten + `', '` + actor + `', session_id from gone
		returning id
	)
	select count(*) from gone`
}

// DeleteMemory forgets one memory for good (forgetSQL).
func (s *Store) DeleteMemory(ctx context.Context, id string) error {
	return s.inTx(ctx, func(tx pgx.Tx, me string) error {
		var forgotten int
		err := tx.QueryRow(ctx, forgetSQL(`id = $2::uuid`, mentor.ActorFacilitator), me, id).Scan(&forgotten)
		if err == nil && forgotten == 0 {
			return mentor.Errorf(mentor.CodeNotFound, "Memory not found")
		}
		return err
	})
}

// ForgetMemories forgets, like DeleteMemory, every memory of the
// conversation the query selects, in one transaction, and returns how
// many. Forgetting takes turns with saves and consolidation runs of the
// same memories.
func (s *Store) ForgetMemories(ctx context.Context, q mentor.ForgetQuery) (int, error) {
	var forgotten int
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		if _, err := requireLearner(ctx, tx, me, q.LearnerID); err != nil {
			return err
		}
		if err := lockLearnerMemories(ctx, tx, me, learnerKey(q.LearnerID)); err != nil {
			return err
		}
		return tx.QueryRow(ctx, forgetSQL(`coalesce(learner_id, '`+nilLearner+`'::uuid) = $2::uuid
			and ($3 = '' or type = $3)
			and ($4::timestamptz is null or created_at < $4)
			and ($5::timestamptz is null or created_at >= $5)`, mentor.ActorFacilitator),
			me, learnerKey(q.LearnerID), string(q.Type), q.Before, q.After).Scan(&forgotten)
	})
	return forgotten, err
}

// ForgetUnconfirmedMemories applies every account's retention setting, up
// to batch memories at a time (migration 0025), and returns how many were
// forgotten. It runs across facilitators, as the worker.
func (s *Store) ForgetUnconfirmedMemories(ctx context.Context, batch int) (int, error) {
	return s.countAsWorker(ctx, `select public.forget_unconfirmed_memories($1)`, batch)
}

// startAfresh makes the next session's opening forget the conversation
// being cleared: its stored opening goes, and the live session's closing
// state (feelings, key moments, hooks, what was learnt) and last message
// start again. The session itself stays live. Called after the
// conversation's row is locked, so the order of locks is a post's. The
// closing state keeps its count of exchanges alone, set into an empty
// object by jsonb_set, which is immutable: Citus refuses a stable function
// (jsonb_build_object) of a column in an UPDATE.
func startAfresh(ctx context.Context, tx pgx.Tx, me string, learnerID *string) error {
	_, err := tx.Exec(ctx, `with opening as (
			delete from public.session_openings where `+sameConversation+`
		)
		update public.mentor_sessions
		set closing = coalesce(jsonb_strip_nulls(jsonb_set('{}'::jsonb, '{exchanges}', closing->'exchanges')), '{}'::jsonb),
			last_message = ''
		where `+sameConversation+` and ended_at is null`, me, learnerKey(learnerID))
	return err
}
