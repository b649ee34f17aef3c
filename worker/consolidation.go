package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"mentormemory/mentor"
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
		return true, nil
	case errors.Is(err, mentor.ErrLeaseLost):
		w.log.Warn("consolidation taken over by another worker", "job", job.ID)
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
	ctx = context.WithoutCancel(ctx)
	if err := w.store.FailConsolidation(ctx, *job, err, retryAt != nil); err != nil {
		return true, err
	}
	return true, w.store.FailJob(ctx, job.Job, err, retryAt)
}

// consolidate plans the run from the learner's current memories, checks the
// plan against them, rebuilds the profile from what the plan leaves, and
// applies both with the run's record in one transaction: a run killed or
// that lost its lease applies nothing.
func (w *Worker) consolidate(ctx context.Context, job mentor.ConsolidationJob) error {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.JobTimeout)
	defer cancel()
	in, err := w.store.StartConsolidation(ctx, job, w.cfg.Consolidator.Name())
	if err != nil {
		return err
	}
	now := w.cfg.Now()
	plan, err := w.cfg.Consolidator.Plan(ctx, in, now)
	if err != nil {
		return err
	}
	if err := plan.Validate(in.Memories); err != nil {
		return fmt.Errorf("the consolidation plan was refused: %w", err)
	}
	profile := mentor.BuildProfile(*job.LearnerID, in.LearnerName, plan.Remaining(in.Memories), in.Profile.OwnLines(),
		mentor.ProfileTokenBudget, tokens.Count, now)
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
