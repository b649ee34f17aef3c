// Package worker runs the memory's background work: it extracts learner
// memories from queued exchanges, has a model write the words sessions end
// with, and ends sessions left idle. Jobs live in
// Postgres, so they survive a restart; each is leased, retried with backoff,
// and completed in the same transaction as its effects, so none takes
// effect twice.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"mentormemory/mentor"
	"mentormemory/metrics"
)

// Defaults for Config.
const (
	DefaultPoll        = 2 * time.Second
	DefaultIdleSweep   = time.Minute
	DefaultMaxAttempts = 5
	DefaultJobTimeout  = time.Minute
	DefaultConcurrency = 4
	firstRetry         = 5 * time.Second
	maxRetry           = 10 * time.Minute
	idleSessionsBatch  = 50
	// A summary is parsed for search once it has stood unchanged this
	// long: a conversation posted to after every reply is parsed when its
	// exchange pauses, not after every post (search parses the few changed
	// meanwhile itself).
	DefaultSummarySettle = 30 * time.Second
	DefaultSummarySweep  = 5 * time.Second
	summariesBatch       = 200
)

// Store is what the worker needs of the database.
type Store interface {
	ClaimJob(ctx context.Context) (*mentor.ExtractionJob, error)
	ExtractionInput(ctx context.Context, job mentor.ExtractionJob) (mentor.ExtractionRequest, error)
	CompleteExtraction(ctx context.Context, job mentor.ExtractionJob, learnt []mentor.NewMemory) ([]mentor.Saved, error)
	FailJob(ctx context.Context, job mentor.Job, cause error, retryAt *time.Time) error
	// DeferJob puts a job back, attempt unspent, to run at until.
	DeferJob(ctx context.Context, job mentor.Job, until time.Time) error
	IdleSessions(ctx context.Context, limit int) ([]mentor.IdleSession, error)
	EndSession(ctx context.Context, learnerID *string, reason string) (mentor.Ended, error)
	// ForgetUnconfirmedMemories applies the accounts' retention settings to
	// up to batch memories and returns how many were forgotten.
	ForgetUnconfirmedMemories(ctx context.Context, batch int) (int, error)
	SummariesDue(ctx context.Context, settled time.Duration, limit int) ([]mentor.SummariesDue, error)
	RefreshSummaryVectors(ctx context.Context, conversationIDs []string) (int, error)
	ConsolidationStore
	ClosingStore
}

type Config struct {
	// Extractor finds memories in exchanges; nil leaves jobs queued (the
	// store then queues none).
	Extractor mentor.Extractor
	// Embedder embeds extracted memories; nil stores them without.
	Embedder mentor.Embedder
	// ClosingWriter writes the words sessions end with, their goodbye
	// lines and summaries; nil leaves the templates (the store then
	// queues no writing).
	ClosingWriter mentor.ClosingWriter
	// Consolidator plans consolidation runs; nil plans them by rules
	// (mentor.OfflineConsolidator).
	Consolidator       mentor.Consolidator
	ConsolidationSweep time.Duration // how often to queue the nightly runs due
	// Now is the time consolidation plans at: time.Now, unless a
	// simulation runs on its own clock.
	Now       func() time.Time
	Poll      time.Duration // how often to look for due jobs when not woken
	IdleSweep time.Duration // how often to end idle sessions
	// SummarySweep is how often to parse for search the summaries that
	// have stood unchanged for SummarySettle (DefaultSummarySweep and
	// DefaultSummarySettle when zero).
	SummarySweep  time.Duration
	SummarySettle time.Duration
	MaxAttempts   int           // attempts before a job is marked failed
	JobTimeout    time.Duration // bound on one job's model calls
	// Concurrency is how many jobs run at once. A job waits on the model
	// most of its time and holds no database connection meanwhile, so one
	// at a time would fall behind a single busy hour of exchanges.
	Concurrency int
	// Metrics, when set, counts the jobs finished, by kind and outcome.
	Metrics *metrics.Metrics
}

type Worker struct {
	store Store
	cfg   Config
	log   *slog.Logger
	wake  chan struct{}
}

func New(store Store, cfg Config, log *slog.Logger) *Worker {
	cfg.Poll = orDefault(cfg.Poll, DefaultPoll)
	cfg.IdleSweep = orDefault(cfg.IdleSweep, DefaultIdleSweep)
	cfg.SummarySweep = orDefault(cfg.SummarySweep, DefaultSummarySweep)
	cfg.SummarySettle = orDefault(cfg.SummarySettle, DefaultSummarySettle)
	cfg.MaxAttempts = orDefault(cfg.MaxAttempts, DefaultMaxAttempts)
	cfg.JobTimeout = orDefault(cfg.JobTimeout, DefaultJobTimeout)
	cfg.Concurrency = orDefault(cfg.Concurrency, DefaultConcurrency)
	cfg.ConsolidationSweep = orDefault(cfg.ConsolidationSweep, DefaultConsolidationSweep)
	if cfg.Consolidator == nil {
		cfg.Consolidator = mentor.OfflineConsolidator{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Worker{store: store, cfg: cfg, log: log, wake: make(chan struct{}, 1)}
}

// orDefault is a setting of Config, or def when it is zero or less: left
// unset, as no interval, count or timeout of the worker can be.
func orDefault[T int | time.Duration](setting, def T) T {
	if setting <= 0 {
		return def
	}
	return setting
}

// Wake tells the worker a job was queued, so it runs now instead of at the
// next poll. It never blocks.
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run works until ctx is done: Concurrency loops run extraction jobs, one
// runs consolidations, one writes sessions' closing words (with a
// ClosingWriter), idle sessions are ended every IdleSweep, the summaries
// that settled are parsed for search every SummarySweep, and every
// ConsolidationSweep the nightly consolidations are queued and the
// accounts' retention applied. The jobs in
// progress are finished first: their work is not cut off by the shutdown,
// only bounded by JobTimeout.
func (w *Worker) Run(ctx context.Context) {
	var loops sync.WaitGroup
	if w.cfg.Extractor != nil {
		for range w.cfg.Concurrency {
			loops.Go(func() { w.loop(ctx, w.RunOnce) })
		}
	}
	loops.Go(func() { w.loop(ctx, w.RunConsolidationOnce) })
	if w.cfg.ClosingWriter != nil {
		loops.Go(func() { w.loop(ctx, w.RunClosingOnce) })
	}
	sweep := time.NewTicker(w.cfg.IdleSweep)
	defer sweep.Stop()
	nightly := time.NewTicker(w.cfg.ConsolidationSweep)
	defer nightly.Stop()
	summaries := time.NewTicker(w.cfg.SummarySweep)
	defer summaries.Stop()
	for {
		select {
		case <-ctx.Done():
			loops.Wait()
			return
		case <-sweep.C:
			if _, err := w.EndIdleSessions(ctx); err != nil {
				w.log.Error("ending idle sessions failed", "err", err)
			}
		case <-summaries.C:
			if _, err := w.RefreshSummaryVectors(ctx); err != nil {
				w.log.Error("parsing summaries for search failed", "err", err)
			}
		case <-nightly.C:
			if _, err := w.QueueNightlyConsolidations(ctx); err != nil {
				w.log.Error("queueing nightly consolidations failed", "err", err)
			}
			if _, err := w.ApplyRetention(ctx); err != nil {
				w.log.Error("applying retention failed", "err", err)
			}
		}
	}
}

// loop runs due jobs with runOnce one after another until there are none,
// then waits to be woken or for the next poll. Each job claimed wakes
// another loop, so a burst of jobs spreads over every loop that is idle.
func (w *Worker) loop(ctx context.Context, runOnce func(context.Context) (bool, error)) {
	poll := time.NewTicker(w.cfg.Poll)
	defer poll.Stop()
	for {
		for ctx.Err() == nil {
			ran, err := runOnce(context.WithoutCancel(ctx))
			if err != nil {
				w.log.Error("memory job failed", "err", err)
			}
			if !ran || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-poll.C:
		}
	}
}

// RunOnce claims one due job and runs it. It reports whether there was a
// job; the error is about the queue itself, as a failed job is retried.
func (w *Worker) RunOnce(ctx context.Context) (bool, error) {
	if w.cfg.Extractor == nil {
		return false, nil
	}
	job, err := w.store.ClaimJob(ctx)
	if err != nil || job == nil {
		return false, err
	}
	w.Wake()
	ctx = mentor.WithCaller(ctx, caller(job.FacilitatorID))
	if err := w.extract(ctx, *job); err != nil {
		if errors.Is(err, mentor.ErrLeaseLost) {
			w.log.Warn("memory job taken over by another worker", "job", job.ID)
			return true, nil
		}
		// The facilitator's model budget is used up for the day: the
		// exchange waits for the next one, it is not lost.
		if mentor.ErrorCode(err) == mentor.CodeRateLimited {
			until := time.Now().Add(mentor.RetryAfter(err))
			w.log.Info("memory job waits for the model budget", "job", job.ID, "until", until)
			w.cfg.Metrics.ObserveJob(extractJob, metrics.JobRetried)
			return true, w.store.DeferJob(context.WithoutCancel(ctx), job.Job, until)
		}
		retryAt := w.retryAt(job.Attempts)
		w.log.Warn("memory extraction failed", "job", job.ID, "attempt", job.Attempts, "retry", retryAt != nil, "err", err)
		w.cfg.Metrics.ObserveJob(extractJob, failedOrRetried(retryAt))
		return true, w.store.FailJob(context.WithoutCancel(ctx), job.Job, err, retryAt)
	}
	w.cfg.Metrics.ObserveJob(extractJob, metrics.JobDone)
	return true, nil
}

// The kinds of job, as the metrics name them (the queue's own names).
const (
	extractJob     = "extract"
	consolidateJob = "consolidate"
	closingJob     = "end_session"
)

// failedOrRetried is the outcome of a failed attempt: retried when a retry
// is due at retryAt, failed for good without one.
func failedOrRetried(retryAt *time.Time) string {
	if retryAt != nil {
		return metrics.JobRetried
	}
	return metrics.JobFailed
}

func (w *Worker) extract(ctx context.Context, job mentor.ExtractionJob) error {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.JobTimeout)
	defer cancel()
	req, err := w.store.ExtractionInput(ctx, job)
	if err != nil {
		return err
	}
	var learnt []mentor.NewMemory
	if len(req.Turns) > 0 {
		found, err := w.cfg.Extractor.Extract(ctx, req)
		if err != nil {
			return err
		}
		learnt = w.clean(ctx, found)
	}
	saved, err := w.store.CompleteExtraction(ctx, job, learnt)
	if err != nil {
		return err
	}
	if len(saved) > 0 {
		w.log.Info("memories learnt", "job", job.ID, "count", len(saved))
	}
	return nil
}

// clean keeps the memories that pass validation and matter enough
// (mentor.MinExtractedImportance) and embeds them; an embedding failure
// only costs recall by meaning.
func (w *Worker) clean(ctx context.Context, found []mentor.NewMemory) []mentor.NewMemory {
	var valid []mentor.NewMemory
	for _, m := range found {
		if v, err := mentor.ValidateNewMemory(m); err == nil && v.Importance >= mentor.MinExtractedImportance {
			valid = append(valid, v)
		}
	}
	if w.cfg.Embedder == nil || len(valid) == 0 {
		return valid
	}
	texts := make([]string, len(valid))
	for i, m := range valid {
		texts[i] = m.Content
	}
	vectors, err := w.cfg.Embedder.Embed(ctx, texts)
	if err != nil || len(vectors) != len(valid) {
		w.log.Warn("embedding learnt memories failed; stored without", "err", err)
		return valid
	}
	for i := range valid {
		valid[i].Embedding = &mentor.Embedding{Model: w.cfg.Embedder.Model(), Vector: vectors[i]}
	}
	return valid
}

// retryAt backs off exponentially from firstRetry up to maxRetry; nil
// once the attempts are used up.
func (w *Worker) retryAt(attempts int) *time.Time {
	if attempts >= w.cfg.MaxAttempts {
		return nil
	}
	delay := firstRetry << (attempts - 1)
	if delay > maxRetry || delay <= 0 {
		delay = maxRetry
	}
	at := time.Now().Add(delay)
	return &at
}

// RefreshSummaryVectors parses for search the summaries that have stood
// unchanged for SummarySettle since they changed, each facilitator's as
// that facilitator, batch after batch until none is left. It returns how
// many it parsed.
func (w *Worker) RefreshSummaryVectors(ctx context.Context) (int, error) {
	parsed := 0
	for ctx.Err() == nil {
		due, err := w.store.SummariesDue(ctx, w.cfg.SummarySettle, summariesBatch)
		if err != nil {
			return parsed, err
		}
		listed, failed := 0, false
		for _, d := range due {
			listed += len(d.ConversationIDs)
			n, err := w.store.RefreshSummaryVectors(mentor.WithCaller(ctx, caller(d.FacilitatorID)), d.ConversationIDs)
			switch {
			case err == nil:
				parsed += n
			case mentor.ErrorCode(err) == mentor.CodeUnavailable:
				return parsed, err
			default:
				// A facilitator gone meanwhile took their list with them;
				// one that cannot be parsed must not stop everyone else's.
				w.log.Warn("summaries not parsed for search", "facilitator", d.FacilitatorID, "err", err)
				failed = true
			}
		}
		// A list left behind by a failure waits for the next sweep.
		if listed < summariesBatch || failed {
			break
		}
	}
	return parsed, nil
}

// EndIdleSessions ends the sessions nobody spoke in for the idle limit,
// each as its facilitator, so their openings are ready. It returns how
// many it ended.
func (w *Worker) EndIdleSessions(ctx context.Context) (int, error) {
	idle, err := w.store.IdleSessions(ctx, idleSessionsBatch)
	if err != nil {
		return 0, err
	}
	ended := 0
	for _, s := range idle {
		_, err := w.store.EndSession(mentor.WithCaller(ctx, caller(s.FacilitatorID)), s.LearnerID, mentor.EndedIdle)
		switch {
		case err == nil:
			ended++
		case mentor.ErrorCode(err) == mentor.CodeNotFound:
			// Ended or resumed meanwhile.
		case mentor.ErrorCode(err) == mentor.CodeUnavailable:
			return ended, err
		default:
			// One session that cannot be ended must not stop the sweep
			// for everyone else's.
			w.log.Warn("idle session not ended", "facilitator", s.FacilitatorID, "err", err)
		}
	}
	return ended, nil
}

// caller is the identity the worker acts as for a facilitator's data, so
// row-level security applies to background work as to requests.
func caller(facilitatorID string) mentor.Caller {
	claims, _ := json.Marshal(map[string]string{"sub": facilitatorID, "role": "authenticated", "aud": "authenticated"})
	return mentor.Caller{UserID: facilitatorID, Claims: claims}
}
