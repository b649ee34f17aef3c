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
	"mentormemory/metrics"
)

// jobLease is how long a worker holds a job. A worker that dies mid-job
// loses it when the lease runs out, and another worker takes it up.
const jobLease = 2 * time.Minute

// exchangeTurns matches the turns of a job's exchange: $1 facilitator, $2
// learner key, $3..$4 the range of log ids. Ids come from one sequence for
// every conversation, so the range alone could take in turns that another
// conversation stored meanwhile.
const exchangeTurns = sameConversation + ` and id between $3 and $4`

// extractionKnown bounds the known memories given to the extractor.
const extractionKnown = 30

// otherLearnerNamesSQL lists the names of the caller's ($1) learners other
// than the learner key $2 (all of them for the general conversation), which
// the background prompts hide as they hide the learner's own.
const otherLearnerNamesSQL = `select coalesce(array_agg(name order by created_at, name), '{}') from public.learners
	where facilitator_id = $1::uuid and id <> $2::uuid`

type extractPayload struct {
	SessionID     string `json:"session_id"`
	FromTurnID    int64  `json:"from_turn_id"`
	ThroughTurnID int64  `json:"through_turn_id"`
}

// enqueueExtraction queues the extraction of one stored exchange, unless
// the facilitator turned learning off for its conversation: turns posted
// while it is off are never learnt from, even once it is on again. The
// dedupe key names the turns, so the same exchange is never queued twice.
// It reports whether a job was queued.
func enqueueExtraction(ctx context.Context, tx pgx.Tx, me string, learnerID *string, sessionID string, turns turnRange) (bool, error) {
	payload, err := json.Marshal(extractPayload{SessionID: sessionID, FromTurnID: turns.first, ThroughTurnID: turns.last})
	if err != nil {
		return false, err
	}
	tag, err := tx.Exec(ctx, `insert into public.memory_jobs (facilitator_id, learner_id, kind, dedupe_key, payload)
		select $1::uuid, $2::uuid, 'extract', $3, $4::jsonb
		where public.memory_learning_on($1::uuid, $2::uuid)
		on conflict (facilitator_id, kind, dedupe_key) do nothing`,
		me, learnerID, fmt.Sprintf("turns:%d-%d", turns.first, turns.last), string(payload))
	return tag.RowsAffected() > 0, err
}

// ClaimJob leases the next due extraction job, or returns nil when none is
// due. Jobs whose lease ran out are due again. It runs as the service, not
// as a caller: jobs belong to every facilitator.
//
// The jobs table is reachable through Supabase's Data API, so a job may not
// be one the service queued. One whose payload does not describe an
// exchange is failed for good, with the reason, as it is claimed, and the
// next one is claimed instead: a malformed job is never retried, and any
// number of them holds no real job back.
func (s *Store) ClaimJob(ctx context.Context) (*mentor.ExtractionJob, error) {
	return claim(ctx, s, "extract", func(job mentor.Job, payload []byte) (*mentor.ExtractionJob, error) {
		p, err := parseExtractPayload(payload)
		if err != nil {
			return nil, err
		}
		return &mentor.ExtractionJob{Job: job, SessionID: p.SessionID, FromTurnID: p.FromTurnID, ThroughTurnID: p.ThroughTurnID}, nil
	})
}

// claim leases the next due job of kind and reads it with parse. A job
// parse refuses is failed for good with its reason, and the next one is
// leased instead; nil when none is due.
func claim[T any](ctx context.Context, s *Store, kind string, parse func(job mentor.Job, payload []byte) (*T, error)) (*T, error) {
	for {
		job, payload, err := s.leaseJob(ctx, kind)
		if err != nil || job == nil {
			return nil, err
		}
		claimed, err := parse(*job, payload)
		if err == nil {
			return claimed, nil
		}
		if err := s.FailJob(ctx, *job, err, nil); err != nil {
			return nil, err
		}
	}
}

// lockLearnerMemories makes the transaction's changes to one learner's
// memories (a save, a consolidation run, queueing one) take turns with
// every other's; key is the learner's (learnerKey).
func lockLearnerMemories(ctx context.Context, tx pgx.Tx, me, key string) error {
	_, err := tx.Exec(ctx, `select pg_advisory_xact_lock(hashtextextended($1 || $2, 0))`, me, key)
	return err
}

// parseExtractPayload reads an extraction job's payload: a session id and
// the log ids of one exchange's turns, at most a post's worth.
func parseExtractPayload(raw []byte) (extractPayload, error) {
	var p extractPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("malformed job: %w", err)
	}
	if _, err := uuid.Parse(p.SessionID); err != nil {
		return p, errors.New("malformed job: session_id is not a uuid")
	}
	if p.FromTurnID < 1 || p.ThroughTurnID < p.FromTurnID || p.ThroughTurnID-p.FromTurnID >= mentor.MaxTurnsPerUpdate {
		return p, errors.New("malformed job: the turn range is not one exchange's")
	}
	return p, nil
}

// asWorker runs one of the queue's own statements, queued by queue, as
// role memory_worker (migration 0018) in one implicit transaction: no
// superuser and no owner, with rights over the queue's bookkeeping only, so
// nothing that fires on these tables runs with more. collect reads its
// result.
func (s *Store) asWorker(ctx context.Context, queue func(b *pgx.Batch), collect func(br pgx.BatchResults) error) error {
	b := &pgx.Batch{}
	b.Queue(actAsWorker)
	queue(b)
	return dbError(sendBatch(ctx, s.pool, b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		return collect(br)
	}))
}

// actAsWorker switches the transaction to role memory_worker, with the
// same statement timeout as a request's.
const actAsWorker = `select set_config('role', 'memory_worker', true),
	set_config('statement_timeout', '` + statementTimeout + `', true)`

// execAsWorker runs one statement of the queue's as memory_worker.
func (s *Store) execAsWorker(ctx context.Context, sql string, args ...any) error {
	return s.asWorker(ctx, func(b *pgx.Batch) { b.Queue(sql, args...) }, func(br pgx.BatchResults) error {
		_, err := br.Exec()
		return err
	})
}

// countAsWorker runs one of the queue's statements that answers with a
// count, as memory_worker, and returns the count.
func (s *Store) countAsWorker(ctx context.Context, sql string, args ...any) (int, error) {
	var n int
	err := s.asWorker(ctx, func(b *pgx.Batch) { b.Queue(sql, args...) }, func(br pgx.BatchResults) error {
		return br.QueryRow().Scan(&n)
	})
	return n, err
}

// queryAsWorker runs one of the queue's queries as memory_worker and
// returns its rows, each read by scan.
func queryAsWorker[T any](ctx context.Context, s *Store, scan pgx.RowToFunc[T], sql string, args ...any) ([]T, error) {
	var rows []T
	err := s.asWorker(ctx, func(b *pgx.Batch) { b.Queue(sql, args...) }, func(br pgx.BatchResults) (err error) {
		rows, err = collectRows(br, scan)
		return err
	})
	return rows, err
}

// leaseCandidates is how many of the next due jobs a lease looks at: those
// another worker leases meanwhile are passed over for the next.
const leaseCandidates = 8

// leaseJob leases the next due job of kind as it is stored, or none when
// none is due. It finds the next due jobs across facilitators, in fair
// order (migration 0015), without locking them, then leases the first one
// no other worker holds by its key alone. On Citus, where each
// facilitator's jobs live on the shard of their own rows, a lock over every
// facilitator's jobs is refused; finding them is a read of every shard and
// leasing one a statement on one shard. When every job it found was
// leased by other workers meanwhile it reports none, and the worker asks
// again on its next turn.
func (s *Store) leaseJob(ctx context.Context, kind string) (*mentor.Job, []byte, error) {
	type candidate struct {
		facilitatorID string
		id            int64
	}
	due, err := queryAsWorker(ctx, s, func(row pgx.CollectableRow) (candidate, error) {
		var c candidate
		return c, row.Scan(&c.facilitatorID, &c.id)
	}, `select facilitator_id::text, id from public.memory_jobs
		where kind = $1 and run_after <= now()
			and (status = 'pending' or (status = 'running' and leased_until < now()))
		order by fair_at, id
		limit $2`, kind, leaseCandidates)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range due {
		var job mentor.Job
		var payload []byte
		leased := false
		err := s.asWorker(ctx, func(b *pgx.Batch) {
			// The lease's token is made here: Citus refuses a volatile
			// function (gen_random_uuid) in an UPDATE.
			b.Queue(`update public.memory_jobs j
			set status = 'running', attempts = attempts + 1, lease_token = $4::uuid,
				leased_until = now() + make_interval(secs => $3)
			from (select facilitator_id, id from public.memory_jobs
				where facilitator_id = $1::uuid and id = $2 and run_after <= now()
					and (status = 'pending' or (status = 'running' and leased_until < now()))
				for update skip locked) due
			where j.facilitator_id = due.facilitator_id and j.id = due.id
			returning j.facilitator_id::text, j.id, j.learner_id::text, j.payload, j.attempts, j.lease_token::text`,
				c.facilitatorID, c.id, jobLease.Seconds(), uuid.NewString())
		}, func(br pgx.BatchResults) error {
			err := br.QueryRow().Scan(&job.FacilitatorID, &job.ID, &job.LearnerID, &payload, &job.Attempts, &job.Lease)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			leased = err == nil
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		if leased {
			return &job, payload, nil
		}
	}
	return nil, nil, nil
}

// ExtractionInput reads, as the job's facilitator, the exchange to learn
// from, the learner's name and the other learners', and what is already
// known about the learner. While the facilitator has learning off, it has
// no turns, so the model is not asked.
func (s *Store) ExtractionInput(ctx context.Context, job mentor.ExtractionJob) (mentor.ExtractionRequest, error) {
	var req mentor.ExtractionRequest
	learning := true
	err := s.read(ctx, nil, func(b *pgx.Batch, me string) {
		b.Queue(learningOnSQL, me, job.LearnerID)
		b.Queue(`select coalesce((select name from public.learners where facilitator_id = $1::uuid and id = $2::uuid), '')`,
			me, job.LearnerID)
		b.Queue(otherLearnerNamesSQL, me, learnerKey(job.LearnerID))
		b.Queue(`select role, content, coalesce(client_turn_id, ''), created_at from public.conversation_turns
			where `+exchangeTurns+` order by id`, me, learnerKey(job.LearnerID), job.FromTurnID, job.ThroughTurnID)
		b.Queue(`select `+memoryColumns+` from public.learner_memories where `+sameConversation+` and status = 'current'
			order by importance desc, last_seen_at desc limit $3`, me, learnerKey(job.LearnerID), extractionKnown)
	}, func(br pgx.BatchResults) error {
		if err := br.QueryRow().Scan(&learning); err != nil {
			return err
		}
		if err := br.QueryRow().Scan(&req.LearnerName); err != nil {
			return err
		}
		if err := br.QueryRow().Scan(&req.OtherNames); err != nil {
			return err
		}
		var err error
		if req.Turns, err = collectRows(br, func(row pgx.CollectableRow) (mentor.Turn, error) {
			var t mentor.Turn
			return t, row.Scan(&t.Role, &t.Content, &t.ID, &t.CreatedAt)
		}); err != nil {
			return err
		}
		req.Known, err = collectRows(br, func(row pgx.CollectableRow) (mentor.LearnerMemory, error) {
			return scanMemory(row)
		})
		return err
	})
	if !learning {
		req.Turns = nil
	}
	return req, err
}

// CompleteExtraction stores what was learnt from the job's exchange, as the
// job's facilitator, adds it to the session's closing state (and to the
// next opening if the session has ended meanwhile), and marks the job done,
// all in one transaction. If the worker's lease was lost, nothing is stored
// and mentor.ErrLeaseLost is returned.
func (s *Store) CompleteExtraction(ctx context.Context, job mentor.ExtractionJob, learnt []mentor.NewMemory) ([]mentor.Saved, error) {
	var saved []mentor.Saved
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		var learnerName string
		if job.LearnerID != nil {
			name, err := requireLearner(ctx, tx, me, job.LearnerID)
			if mentor.ErrorCode(err) == mentor.CodeNotFound {
				// The learner was deleted meanwhile: nothing to learn.
				return markJobDone(ctx, tx, job.Job)
			}
			if err != nil {
				return err
			}
			learnerName = name
		}
		// Learning was turned off after the job was queued: it does
		// nothing.
		if on, err := learningOn(ctx, tx, me, job.LearnerID); err != nil || !on {
			if err != nil {
				return err
			}
			return markJobDone(ctx, tx, job.Job)
		}
		var sourceTurnIDs []int64
		if err := tx.QueryRow(ctx, `select coalesce(array_agg(id order by id), '{}') from public.conversation_turns
			where `+exchangeTurns, me, learnerKey(job.LearnerID), job.FromTurnID, job.ThroughTurnID).Scan(&sourceTurnIDs); err != nil {
			return err
		}
		contents := make([]string, 0, len(learnt))
		for _, m := range learnt {
			m.LearnerID, m.Source, m.JobID = job.LearnerID, mentor.SourceExtracted, &job.ID
			m.SessionID = &job.SessionID
			m.SourceTurnIDs = sourceTurnIDs
			one, err := saveMemory(ctx, tx, me, m)
			if err != nil {
				return err
			}
			saved = append(saved, one)
			contents = append(contents, one.Memory.Content)
		}
		if len(contents) > 0 {
			if err := s.addLearntToSession(ctx, tx, me, job, learnerName, contents); err != nil {
				return err
			}
		}
		return markJobDone(ctx, tx, job.Job)
	})
	return saved, err
}

// addLearntToSession records learnt memories in the session's closing
// state; when the session has ended already, the next opening is rebuilt
// so it knows them too.
func (s *Store) addLearntToSession(ctx context.Context, tx pgx.Tx, me string, job mentor.ExtractionJob, learnerName string, contents []string) error {
	var closingJSON []byte
	var started time.Time
	var ended *time.Time
	err := tx.QueryRow(ctx, `select closing, started_at, ended_at from public.mentor_sessions
		where facilitator_id = $1::uuid and id = $2::uuid for update`, me, job.SessionID).Scan(&closingJSON, &started, &ended)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	var closing mentor.ClosingState
	if err := json.Unmarshal(closingJSON, &closing); err != nil {
		return err
	}
	closing.SessionID = job.SessionID
	closing = closing.AddLearnt(contents...)
	encoded, err := json.Marshal(closing)
	if err != nil {
		return err
	}
	// An ended session's summary tells what was learnt in it too.
	var summary *string
	if ended != nil {
		written := mentor.SummarizeSession(closing, started, *ended)
		summary = &written
	}
	if _, err := tx.Exec(ctx, `update public.mentor_sessions set closing = $3::jsonb, summary = coalesce($4, summary)
		where facilitator_id = $1::uuid and id = $2::uuid`, me, job.SessionID, string(encoded), summary); err != nil {
		return err
	}
	// What was learnt goes into the model's goodbye and summary too.
	if err := s.queueClosingWords(ctx, tx, me, job.LearnerID, closing, ended != nil); err != nil {
		return err
	}
	if ended == nil {
		return nil
	}
	// Only if this session's opening is still the latest one.
	var latest bool
	if err := tx.QueryRow(ctx, `select exists (select 1 from public.session_openings
		where facilitator_id = $1::uuid and session_id = $2::uuid)`, me, job.SessionID).Scan(&latest); err != nil || !latest {
		return err
	}
	_, err = storeOpening(ctx, tx, me, job.LearnerID, learnerName, closing, *ended)
	return err
}

// markJobDone finishes the job if this worker still holds its lease, in
// the transaction of the job's work, as the job's facilitator: the policy
// memory_jobs_finish (migration 0042) lets memory_service end a running
// job of its caller's, and nothing else of the queue. (It switched to role
// memory_worker, which Citus cannot follow within a transaction.)
func markJobDone(ctx context.Context, tx pgx.Tx, job mentor.Job) error {
	tag, err := tx.Exec(ctx, `update public.memory_jobs
		set status = 'done', finished_at = now(), lease_token = null, last_error = null
		where facilitator_id = $1::uuid and id = $2 and status = 'running' and lease_token = $3::uuid`,
		job.FacilitatorID, job.ID, job.Lease)
	if err == nil && tag.RowsAffected() == 0 {
		return mentor.ErrLeaseLost
	}
	return err
}

// FailJob records a failed attempt: the job is retried at retryAt, or
// marked failed for good when retryAt is nil. (Each outcome has a
// statement of its own: Citus refuses now() within a CASE of an UPDATE.)
func (s *Store) FailJob(ctx context.Context, job mentor.Job, cause error, retryAt *time.Time) error {
	if retryAt == nil {
		return s.execAsWorker(ctx, `update public.memory_jobs
			set status = 'failed', finished_at = now(), last_error = left($4, 500), lease_token = null
			where facilitator_id = $1::uuid and id = $2 and lease_token = $3::uuid`,
			job.FacilitatorID, job.ID, job.Lease, cause.Error())
	}
	return s.execAsWorker(ctx, `update public.memory_jobs
		set status = 'pending', run_after = $4, finished_at = null, last_error = left($5, 500), lease_token = null
		where facilitator_id = $1::uuid and id = $2 and lease_token = $3::uuid`,
		job.FacilitatorID, job.ID, job.Lease, *retryAt, cause.Error())
}

// IdleSessions lists live sessions idle past the limit, across
// facilitators, for the worker to end.
func (s *Store) IdleSessions(ctx context.Context, limit int) ([]mentor.IdleSession, error) {
	return queryAsWorker(ctx, s, func(row pgx.CollectableRow) (mentor.IdleSession, error) {
		var idle mentor.IdleSession
		return idle, row.Scan(&idle.FacilitatorID, &idle.LearnerID)
	}, `select facilitator_id::text, learner_id::text from public.mentor_sessions
		where ended_at is null and last_activity_at <= now() - make_interval(secs => $1)
		order by last_activity_at limit $2`, mentor.SessionIdleLimit.Seconds(), limit)
}

// jobKinds are the kinds of job the queue holds (migration 0020), each
// reported even when none waits, so that an alert on a kind's backlog
// never reads a missing series as no backlog.
var jobKinds = []string{"consolidate", "end_session", "extract"}

// QueueStats reads the queue across facilitators, as the worker's role,
// for the operator's metrics: per kind, the jobs waiting and running, and
// how long the oldest due job has waited.
func (s *Store) QueueStats(ctx context.Context) ([]metrics.QueueStats, error) {
	var stats []metrics.QueueStats
	err := s.asWorker(ctx, func(b *pgx.Batch) {
		b.Queue(`select k.kind,
				count(j.id) filter (where j.status = 'pending'),
				count(j.id) filter (where j.status = 'running'),
				coalesce(extract(epoch from now() - min(j.run_after) filter (where j.status = 'pending' and j.run_after <= now())), 0)::float8
			from unnest($1::text[]) as k(kind)
			left join public.memory_jobs j on j.kind = k.kind and j.status in ('pending', 'running')
			group by k.kind order by k.kind`, jobKinds)
	}, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		stats, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (metrics.QueueStats, error) {
			var q metrics.QueueStats
			var oldest float64
			err := row.Scan(&q.Kind, &q.Queued, &q.Running, &oldest)
			q.OldestDueSince = time.Duration(oldest * float64(time.Second))
			return q, err
		})
		return err
	})
	return stats, err
}
