package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"mentormemory/mentor"
	"mentormemory/metrics"
	"mentormemory/tokens"
)

// Defaults of consolidation.
const (
	// DefaultConsolidationSweep is how often the worker queues the nightly
	// runs due (each learner's at most once in 20 hours).
	DefaultConsolidationSweep = time.Hour
	// consolidationAttempts: a run that fails this many times (a model's
	// plan refused three times, say) is recorded as failed, for review.
	consolidationAttempts = 3
	nightlyBatch          = 100
)

// ConsolidationStore is what consolidation needs of the database.
type ConsolidationStore interface {
	ClaimConsolidation(ctx context.Context) (*mentor.ConsolidationJob, error)
	StartConsolidation(ctx context.Context, job mentor.ConsolidationJob, consolidator string) (mentor.ConsolidationInput, error)
	CompleteConsolidation(ctx context.Context, job mentor.ConsolidationJob, plan mentor.ConsolidationPlan, memoriesIn int, profile mentor.Profile) error
	FailConsolidation(ctx context.Context, job mentor.ConsolidationJob, cause error, retried bool) error
	QueueNightlyConsolidations(ctx context.Context, batch int) (int, error)
}

// RunConsolidationOnce claims one due consolidation run and runs it. It
// reports whether there was one; the error is about the queue itself, as a
// failed run is retried, then recorded as failed.
func (w *Worker) RunConsolidationOnce(ctx context.Context) (bool, error) {
	job, err := w.store.ClaimConsolidation(ctx)
	if err != nil || job == nil {
		return false, err
	}
	ctx = mentor.WithCaller(ctx, caller(job.FacilitatorID))
	err = w.consolidate(ctx, *job)
	switch {
	case err == nil:
		w.cfg.Metrics.ObserveJob(consolidateJob, metrics.JobDone)
		return true, nil
	case errors.Is(err, mentor.ErrLeaseLost):
		w.log.Warn("consolidation taken over by another worker", "job", job.ID)
		return true, nil
	case errors.Is(err, mentor.ErrLearningOff):
		// The store recorded the run as skipped and finished the job.
		w.log.Info("consolidation skipped: learning is off", "job", job.ID)
		return true, nil
	case mentor.ErrorCode(err) == mentor.CodeNotFound:
		// The run went with its learner.
		return true, w.store.FailJob(context.WithoutCancel(ctx), job.Job, err, nil)
	}
	var retryAt *time.Time
	if job.Attempts < consolidationAttempts {
		retryAt = w.retryAt(job.Attempts)
	}
	w.log.Warn("consolidation failed", "job", job.ID, "attempt", job.Attempts, "retry", retryAt != nil, "err", err)
	w.cfg.Metrics.ObserveJob(consolidateJob, failedOrRetried(retryAt))
	ctx = context.WithoutCancel(ctx)
	if err := w.store.FailConsolidation(ctx, *job, err, retryAt != nil); err != nil {
		return true, err
	}
	return true, w.store.FailJob(ctx, job.Job, err, retryAt)
}

// consolidate plans the run from the learner's current memories, checks the
// plan against them, rebuilds the profile and the digest of the last
// sessions from what the plan leaves, and
// applies both with the run's record in one transaction: a run killed or
// that lost its lease applies nothing.
func (w *Worker) consolidate(ctx context.Context, job mentor.ConsolidationJob) error {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.JobTimeout)
	defer cancel()
	in, err := w.store.StartConsolidation(ctx, job, w.cfg.Consolidator.Name())
	if err != nil {
		return err
	}
	// The worker knows no facilitator's time zone: its days, when a
	// moment has passed, are UTC's.
	now := w.cfg.Now().UTC()
	plan, err := w.cfg.Consolidator.Plan(ctx, in, now)
	if err != nil {
		return err
	}
	if err := plan.Validate(in.Memories); err != nil {
		return fmt.Errorf("the consolidation plan was refused: %w", err)
	}
	remaining := plan.Remaining(in.Memories)
	profile := mentor.BuildProfile(*job.LearnerID, in.LearnerName, remaining, in.Profile.OwnLines(),
		mentor.ProfileTokenBudget, tokens.Count, now)
	profile.Digest = mentor.BuildDigest(in.Sessions, remaining, mentor.DigestTokenBudget, tokens.Count, now)
	if err := w.store.CompleteConsolidation(ctx, job, plan, len(in.Memories), profile); err != nil {
		return err
	}
	w.log.Info("memories consolidated", "job", job.ID, "memories", len(in.Memories), "changes", plan.Counts(),
		"profile_tokens", profile.Tokens)
	return nil
}

// QueueNightlyConsolidations queues the runs due, logging how many.
func (w *Worker) QueueNightlyConsolidations(ctx context.Context) (int, error) {
	queued, err := w.store.QueueNightlyConsolidations(ctx, nightlyBatch)
	if queued > 0 {
		w.log.Info("nightly consolidations queued", "runs", queued)
	}
	return queued, err
}

// retentionBatch bounds the memories one sweep forgets; the sweep goes on
// while whole batches are forgotten.
const retentionBatch = 500

// ApplyRetention forgets the memories the accounts' retention settings let
// go, batch after batch, and returns how many.
func (w *Worker) ApplyRetention(ctx context.Context) (int, error) {
	total := 0
	for {
		forgotten, err := w.store.ForgetUnconfirmedMemories(ctx, retentionBatch)
		total += forgotten
		if err != nil || forgotten < retentionBatch || ctx.Err() != nil {
			if total > 0 {
				w.log.Info("memories forgotten by retention", "memories", total)
			}
			return total, err
		}
	}
}

// Drained is what one drain of the queue did.
type Drained struct {
	Extracted    int `json:"extracted"`
	Consolidated int `json:"consolidated"`
	// ClosingsWritten counts the writings of sessions' closing words.
	ClosingsWritten int `json:"closings_written"`
	SessionsEnded   int `json:"sessions_ended"`
	NightlyQueued   int `json:"nightly_queued"`
	// Forgotten counts the memories the retention settings let go.
	Forgotten int `json:"forgotten"`
	// SummariesParsed counts the settled summaries parsed for search.
	SummariesParsed int `json:"summaries_parsed"`
	// TimeUp says the drain stopped at its time limit with work left.
	TimeUp bool `json:"time_up"`
}

// Drain does the background work due, for a deployment with no worker of
// its own (a scheduled call of the Vercel function): it ends idle sessions,
// queues the nightly consolidations, applies retention, parses the settled
// summaries for search, then runs due jobs one after another
// until none is left or until passes, whichever is first. A job it starts
// runs to its end within JobTimeout; what is left waits for the next drain.
func (w *Worker) Drain(ctx context.Context, until time.Time) (Drained, error) {
	var d Drained
	var err error
	if d.SessionsEnded, err = w.EndIdleSessions(ctx); err != nil {
		return d, err
	}
	if d.NightlyQueued, err = w.QueueNightlyConsolidations(ctx); err != nil {
		return d, err
	}
	if d.Forgotten, err = w.ApplyRetention(ctx); err != nil {
		return d, err
	}
	if d.SummariesParsed, err = w.RefreshSummaryVectors(ctx); err != nil {
		return d, err
	}
	for {
		if time.Now().After(until) {
			d.TimeUp = true
			return d, nil
		}
		extracted, err := w.RunOnce(ctx)
		if err != nil {
			return d, err
		}
		consolidated, err := w.RunConsolidationOnce(ctx)
		if err != nil {
			return d, err
		}
		closed, err := w.RunClosingOnce(ctx)
		if err != nil {
			return d, err
		}
		if extracted {
			d.Extracted++
		}
		if consolidated {
			d.Consolidated++
		}
		if closed {
			d.ClosingsWritten++
		}
		if !extracted && !consolidated && !closed {
			return d, nil
		}
	}
}
