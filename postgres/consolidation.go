package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
	"mentormemory/tokens"
)

// consolidationInputLimit bounds the current memories one run reads: far
// more than a learner gathers, so that a run's work stays bounded whatever
// was stored.
const consolidationInputLimit = 2000

const consolidationRunColumns = `id::text, learner_id::text, trigger, status, consolidator, started_at, finished_at,
	(extract(epoch from finished_at - started_at) * 1000)::bigint, memories_in, memories_out, changes, model_tokens,
	profile_tokens_before, profile_tokens_after, error, created_at`

func scanRun(row pgx.Row) (mentor.ConsolidationRun, error) {
	var r mentor.ConsolidationRun
	var changes []byte
	if err := row.Scan(&r.ID, &r.LearnerID, &r.Trigger, &r.Status, &r.Consolidator, &r.StartedAt, &r.FinishedAt,
		&r.DurationMS, &r.MemoriesIn, &r.MemoriesOut, &changes, &r.ModelTokens, &r.ProfileTokensBefore, &r.ProfileTokensAfter,
		&r.Error, &r.CreatedAt); err != nil {
		return r, err
	}
	return r, json.Unmarshal(changes, &r.Changes)
}

// QueueConsolidation queues a run for the learner, due now, or returns the
// one already queued or running: a learner has one at a time.
func (s *Store) QueueConsolidation(ctx context.Context, learnerID string) (mentor.ConsolidationRun, error) {
	var run mentor.ConsolidationRun
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		if _, err := requireLearner(ctx, tx, me, &learnerID); err != nil {
			return err
		}
		var err error
		run, err = queueConsolidation(ctx, tx, me, learnerID, mentor.TriggerOnDemand, 0)
		return err
	})
	return run, err
}

// sessionEndConsolidationDelay is how long a run queued by a session's end
// waits: sessions of one learner that end close together share it.
const sessionEndConsolidationDelay = 2 * time.Minute

// queueConsolidation queues a run of the learner's consolidation with its
// job, due after delay, unless one is queued or running already, which is
// returned instead; mentor.ErrLearningOff while the facilitator has
// learning off for the learner. Runs of one learner take turns on the same
// lock as saves of its memories.
func queueConsolidation(ctx context.Context, tx pgx.Tx, me, learnerID, trigger string, delay time.Duration) (mentor.ConsolidationRun, error) {
	if err := lockLearnerMemories(ctx, tx, me, learnerID); err != nil {
		return mentor.ConsolidationRun{}, err
	}
	if on, err := learningOn(ctx, tx, me, &learnerID); err != nil || !on {
		if err == nil {
			err = mentor.ErrLearningOff
		}
		return mentor.ConsolidationRun{}, err
	}
	open, err := scanRun(tx.QueryRow(ctx, `select `+consolidationRunColumns+` from public.consolidation_runs
		where facilitator_id = $1::uuid and learner_id = $2::uuid and status in ('queued', 'running')`, me, learnerID))
	if !errors.Is(err, pgx.ErrNoRows) {
		return open, err
	}
	return scanRun(tx.QueryRow(ctx, `
		with job as (
			insert into public.memory_jobs (facilitator_id, learner_id, kind, dedupe_key, payload, run_after)
			values ($1::uuid, $2::uuid, 'consolidate', 'run:' || $4, jsonb_build_object('run_id', $4::text),
				now() + make_interval(secs => $5))
			returning id
		)
		insert into public.consolidation_runs (id, facilitator_id, learner_id, trigger, job_id)
		select $4::uuid, $1::uuid, $2::uuid, $3, id from job
		returning `+consolidationRunColumns,
		me, learnerID, trigger, uuid.NewString(), delay.Seconds()))
}

// ListConsolidations lists the caller's runs, newest first: one learner's,
// or every learner's.
func (s *Store) ListConsolidations(ctx context.Context, learnerID *string, limit int) ([]mentor.ConsolidationRun, error) {
	runs := []mentor.ConsolidationRun{}
	err := s.read(ctx, learnerID, func(b *pgx.Batch, me string) {
		b.Queue(`select `+consolidationRunColumns+` from public.consolidation_runs
			where facilitator_id = $1::uuid and ($2::uuid is null or learner_id = $2::uuid)
			order by created_at desc, id limit $3`, me, learnerID, limit)
	}, func(br pgx.BatchResults) error {
		var err error
		runs, err = collectRows(br, func(row pgx.CollectableRow) (mentor.ConsolidationRun, error) { return scanRun(row) })
		return err
	})
	return runs, err
}

// ClaimConsolidation leases the next due consolidation job. One whose
// payload names no run is failed for good as it is claimed.
func (s *Store) ClaimConsolidation(ctx context.Context) (*mentor.ConsolidationJob, error) {
	return claim(ctx, s, "consolidate", func(job mentor.Job, payload []byte) (*mentor.ConsolidationJob, error) {
		if job.LearnerID == nil {
			return nil, errors.New("malformed job: no learner")
		}
		var p struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal(payload, &p); err != nil || uuid.Validate(p.RunID) != nil {
			return nil, errors.New("malformed job: run_id is not a uuid")
		}
		return &mentor.ConsolidationJob{Job: job, RunID: p.RunID}, nil
	})
}

// StartConsolidation marks the job's run as running, planned by
// consolidator, and reads, as the job's facilitator, what the run starts
// from: the learner's current memories, name, profile and latest ended
// sessions. A run that is
// gone (its learner deleted) is not found.
func (s *Store) StartConsolidation(ctx context.Context, job mentor.ConsolidationJob, consolidator string) (mentor.ConsolidationInput, error) {
	var in mentor.ConsolidationInput
	skipped := false
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		var err error
		if skipped, err = skipWhileLearningOff(ctx, tx, me, job); err != nil || skipped {
			return err
		}
		tag, err := tx.Exec(ctx, `update public.consolidation_runs
			set status = 'running', started_at = now(), consolidator = $3, error = null
			where facilitator_id = $1::uuid and id = $2::uuid and status in ('queued', 'running')`,
			me, job.RunID, consolidator)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return mentor.Errorf(mentor.CodeNotFound, "Consolidation run not found")
		}
		if in.LearnerName, err = requireLearner(ctx, tx, me, job.LearnerID); err != nil {
			return err
		}
		if in.Profile, err = readProfile(ctx, tx, me, *job.LearnerID, in.LearnerName); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, otherLearnerNamesSQL, me, *job.LearnerID).Scan(&in.OtherNames); err != nil {
			return err
		}
		if in.Sessions, err = latestEndedSessions(ctx, tx, me, *job.LearnerID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `select `+memoryColumns+` from public.learner_memories
			where facilitator_id = $1::uuid and learner_id = $2::uuid and status = 'current'
			order by created_at, id limit $3`, me, *job.LearnerID, consolidationInputLimit)
		if err != nil {
			return err
		}
		in.Memories, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (mentor.LearnerMemory, error) { return scanMemory(row) })
		return err
	})
	if err == nil && skipped {
		err = mentor.ErrLearningOff
	}
	return in, err
}

// skipWhileLearningOff ends a consolidation job queued before the
// facilitator turned learning off for its learner: the run is recorded as
// failed with that reason, nothing is changed, and the job is done. It
// reports whether it did.
func skipWhileLearningOff(ctx context.Context, tx pgx.Tx, me string, job mentor.ConsolidationJob) (bool, error) {
	if on, err := learningOn(ctx, tx, me, job.LearnerID); err != nil || on {
		return false, err
	}
	if _, err := tx.Exec(ctx, `update public.consolidation_runs
		set status = 'failed', error = $3, finished_at = now()
		where facilitator_id = $1::uuid and id = $2::uuid and status in ('queued', 'running')`,
		me, job.RunID, "Skipped: learning is off for this learner"); err != nil {
		return false, err
	}
	return true, markJobDone(ctx, tx, job.Job)
}

// CompleteConsolidation applies the plan to the learner's memories, each
// change with its history, records the run as done and finishes the job,
// all in one transaction: a run whose worker lost its lease applies
// nothing (mentor.ErrLeaseLost). A change whose memory is no longer
// current (a person changed it meanwhile) is left out.
func (s *Store) CompleteConsolidation(ctx context.Context, job mentor.ConsolidationJob, plan mentor.ConsolidationPlan,
	memoriesIn int, profile mentor.Profile) error {
	skipped := false
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		learner := *job.LearnerID
		if err := lockLearnerMemories(ctx, tx, me, learner); err != nil {
			return err
		}
		// Learning was turned off while the run planned: nothing applies.
		var err error
		if skipped, err = skipWhileLearningOff(ctx, tx, me, job); err != nil || skipped {
			return err
		}
		counts, err := applyConsolidation(ctx, tx, me, learner, job.ID, plan)
		if err != nil {
			return err
		}
		changes, err := json.Marshal(counts)
		if err != nil {
			return err
		}
		// The facilitator may have written lines of their own since the run
		// read the profile: theirs are kept, the run's copy is not.
		own, err := lockOwnLines(ctx, tx, me, learner)
		if err != nil {
			return err
		}
		if profile, err = profile.WithOwnLines(own, tokens.Count, profile.UpdatedAt); err != nil {
			return err
		}
		before, err := saveProfile(ctx, tx, me, profile)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `update public.consolidation_runs set status = 'done', finished_at = now(),
				memories_in = $3, changes = $4::jsonb, profile_tokens_before = $6, profile_tokens_after = $7, model_tokens = $8,
				memories_out = (select count(*) from public.learner_memories
					where facilitator_id = $1::uuid and learner_id = $5::uuid and status = 'current')
			where facilitator_id = $1::uuid and id = $2::uuid`,
			me, job.RunID, memoriesIn, string(changes), learner, before, profile.Tokens, plan.ModelTokens); err != nil {
			return err
		}
		return markJobDone(ctx, tx, job.Job)
	})
	if err == nil && skipped {
		err = mentor.ErrLearningOff
	}
	return err
}

// lockOwnLines reads the facilitator's own lines of the learner's stored
// profile (none when there is no profile yet), and locks the profile, so
// that lines written now wait for this transaction and are not lost.
func lockOwnLines(ctx context.Context, tx pgx.Tx, me, learnerID string) ([]mentor.ProfileLine, error) {
	var encoded []byte
	err := tx.QueryRow(ctx, `select own_lines from public.learner_profiles
		where facilitator_id = $1::uuid and learner_id = $2::uuid for update`, me, learnerID).Scan(&encoded)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var own []mentor.ProfileLine
	return own, json.Unmarshal(encoded, &own)
}

// FailConsolidation records a failed attempt on the run: queued again
// when the job will be retried, failed for good otherwise, with the reason.
// (Each outcome has a statement of its own: Citus refuses now() within a
// CASE of an UPDATE.)
func (s *Store) FailConsolidation(ctx context.Context, job mentor.ConsolidationJob, cause error, retried bool) error {
	outcome := `status = 'failed', finished_at = now()`
	if retried {
		outcome = `status = 'queued', finished_at = null`
	}
	return s.inTx(ctx, func(tx pgx.Tx, me string) error {
		_, err := tx.Exec(ctx, `update public.consolidation_runs
			set `+outcome+`, error = left($3, 500)
			where facilitator_id = $1::uuid and id = $2::uuid and status in ('queued', 'running')`,
			me, job.RunID, cause.Error())
		return err
	})
}

// applyConsolidation makes the plan's changes and counts those made.
func applyConsolidation(ctx context.Context, tx pgx.Tx, me, learnerID string, jobID int64, plan mentor.ConsolidationPlan) (map[string]int, error) {
	counts := mentor.ConsolidationPlan{}.Counts() // every kind, at zero
	expiries := make([]retirement, len(plan.Expiries))
	for i, e := range plan.Expiries {
		expiries[i] = retirement{id: e.ID, status: mentor.StatusExpired, change: mentor.ChangeExpired}
	}
	resolutions := make([]retirement, len(plan.Resolutions))
	for i, r := range plan.Resolutions {
		resolutions[i] = retirement{id: r.ID, status: mentor.StatusResolved, by: &r.By, change: mentor.ChangeResolved}
	}
	var err error
	if counts["expired"], err = retireAll(ctx, tx, me, learnerID, jobID, expiries); err != nil {
		return nil, err
	}
	if counts["resolved"], err = retireAll(ctx, tx, me, learnerID, jobID, resolutions); err != nil {
		return nil, err
	}
	for _, sup := range plan.Supersessions {
		done, err := supersede(ctx, tx, me, &learnerID, sup.Old, sup.New, mentor.ActorConsolidation, &jobID)
		if err != nil {
			return nil, err
		}
		if done {
			counts["superseded"]++
		}
	}
	for _, m := range plan.Merges {
		merged, err := mergeInto(ctx, tx, me, learnerID, m, jobID)
		if err != nil {
			return nil, err
		}
		counts["merged"] += merged
	}
	return counts, nil
}

// retirement takes a current memory of a learner out of recall with
// status, naming by as what replaced or settled it.
type retirement struct {
	id, status string
	by         *string
	change     string
}

// retireSQL makes a retirement and records it: $1 facilitator, $2 change,
// $3 actor, $4 job, $5 by, $6 memory, $7 learner, $8 status.
var retireSQL = `with ` + memoryBefore(`and status = 'current'
		and coalesce(learner_id, '`+nilLearner+`'::uuid) = $7::uuid`) + `
	changed as (
		update public.learner_memories m set status = $8,
			superseded_by = case when $8 = 'superseded' then $5::uuid end, updated_at = now()
		from before b
		where m.facilitator_id = $1::uuid and m.id = b.id
		returning m.*
	),` + recordChangeSQL

// retireAll makes the retirements in one round trip and returns how many
// it made: one whose memory is no longer current is left out.
func retireAll(ctx context.Context, tx pgx.Tx, me, learnerID string, jobID int64, rs []retirement) (int, error) {
	if len(rs) == 0 {
		return 0, nil
	}
	b := &pgx.Batch{}
	for _, r := range rs {
		b.Queue(retireSQL, me, r.change, mentor.ActorConsolidation, jobID, r.by, r.id, learnerID, r.status)
	}
	done := 0
	err := sendBatch(ctx, tx, b, func(br pgx.BatchResults) error {
		for range rs {
			_, err := scanMemory(br.QueryRow())
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			done++
		}
		return nil
	})
	return done, err
}

// mergeInto makes the merge's absorbed memories one with the memory kept:
// it takes their mentions, their importance if higher, their latest
// sources and their latest confirmation, and each of them is superseded by
// it. It returns how many were absorbed; none when the memory kept is no
// longer current.
func mergeInto(ctx context.Context, tx pgx.Tx, me, learnerID string, m mentor.Merge, jobID int64) (int, error) {
	rows, err := tx.Query(ctx, `select id::text from public.learner_memories
		where facilitator_id = $1::uuid and id = any($2::uuid[]) and status = 'current'
			and coalesce(learner_id, '`+nilLearner+`'::uuid) = $3::uuid
		for update`, me, m.Absorbed, learnerID)
	if err != nil {
		return 0, err
	}
	absorbed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(absorbed) == 0 {
		return 0, err
	}
	_, err = scanMemory(tx.QueryRow(ctx, `with `+memoryBefore(`and status = 'current'
			and coalesce(learner_id, '`+nilLearner+`'::uuid) = $9::uuid`)+`
		absorbed as (
			select sum(mentions) as mentions, max(importance) as importance, max(last_seen_at) as last_seen,
				array(select t from public.learner_memories x, unnest(x.source_turn_ids) t
					where x.facilitator_id = $1::uuid and x.id = any($7::uuid[])) as turn_ids
			from public.learner_memories
			where facilitator_id = $1::uuid and id = any($7::uuid[])
		),
		changed as (
			update public.learner_memories m set
				mentions = m.mentions + a.mentions,
				importance = greatest(m.importance, a.importance),
				-- Each memory absorbed was the fact learnt again.
				confidence = greatest(b.confidence, $8),
				last_seen_at = greatest(m.last_seen_at, a.last_seen),
				source_turn_ids = array(select id from (
					select distinct unnest(m.source_turn_ids || a.turn_ids) as id order by id desc limit 100) latest
					order by id),
				updated_at = now()
			from before b, absorbed a
			where m.facilitator_id = $1::uuid and m.id = b.id
			returning m.*
		),`+recordChangeSQL,
		me, mentor.ChangeMerged, mentor.ActorConsolidation, jobID, nil,
		m.Keep, absorbed, mentor.RepeatConfidence, learnerID))
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil // the memory kept was changed meanwhile: no merge
	}
	if err != nil {
		return 0, err
	}
	retired := make([]retirement, len(absorbed))
	for i, id := range absorbed {
		retired[i] = retirement{id: id, status: mentor.StatusSuperseded, by: &m.Keep, change: mentor.ChangeMerged}
	}
	if _, err := retireAll(ctx, tx, me, learnerID, jobID, retired); err != nil {
		return 0, err
	}
	return len(absorbed), nil
}

// QueueNightlyConsolidations queues, as the worker, a run for up to batch
// learners with memories changed since their last run and none in the
// last 20 hours (migration 0020). It returns how many it queued.
func (s *Store) QueueNightlyConsolidations(ctx context.Context, batch int) (int, error) {
	return s.countAsWorker(ctx, `select public.queue_nightly_consolidations($1)`, batch)
}

// latestEndedSessions are the learner's last mentor.DigestSessions ended
// sessions, latest first.
func latestEndedSessions(ctx context.Context, tx pgx.Tx, me, learnerID string) ([]mentor.EndedSession, error) {
	rows, err := tx.Query(ctx, `select id::text, started_at, ended_at, closing, coalesce(summary, '')
		from public.mentor_sessions
		where facilitator_id = $1::uuid and learner_id = $2::uuid and ended_at is not null
		order by ended_at desc limit $3`, me, learnerID, mentor.DigestSessions)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (mentor.EndedSession, error) {
		var s mentor.EndedSession
		var closing []byte
		if err := row.Scan(&s.ID, &s.StartedAt, &s.EndedAt, &closing, &s.Summary); err != nil {
			return s, err
		}
		return s, json.Unmarshal(closing, &s.Closing)
	})
}
