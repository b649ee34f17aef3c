package worker

import (
	"context"
	"errors"

	"mentormemory/mentor"
	"mentormemory/metrics"
)

// ClosingStore is what the writing of sessions' closing words needs of the
// database.
type ClosingStore interface {
	ClaimClosing(ctx context.Context) (*mentor.ClosingJob, error)
	ClosingInput(ctx context.Context, job mentor.ClosingJob) (req mentor.ClosingRequest, current bool, err error)
	CompleteClosing(ctx context.Context, job mentor.ClosingJob, words mentor.ClosingWords) error
}

// RunClosingOnce claims one due writing of a session's closing words and
// has the model write them. It reports whether there was one; the error is
// about the queue itself. A writing that fails is not retried: the
// templates stay, and the session has usually moved on anyway.
func (w *Worker) RunClosingOnce(ctx context.Context) (bool, error) {
	if w.cfg.ClosingWriter == nil {
		return false, nil
	}
	job, err := w.store.ClaimClosing(ctx)
	if err != nil || job == nil {
		return false, err
	}
	ctx = mentor.WithCaller(ctx, caller(job.FacilitatorID))
	err = w.writeClosing(ctx, *job)
	switch {
	case err == nil:
		w.cfg.Metrics.ObserveJob(closingJob, metrics.JobDone)
		return true, nil
	case errors.Is(err, mentor.ErrLeaseLost):
		w.log.Warn("closing words taken over by another worker", "job", job.ID)
		return true, nil
	}
	w.log.Warn("closing words not written; the templates stay", "job", job.ID, "err", err)
	w.cfg.Metrics.ObserveJob(closingJob, metrics.JobFailed)
	return true, w.store.FailJob(context.WithoutCancel(ctx), job.Job, err, nil)
}

// writeClosing asks the model for the words of the session as the job
// describes it, unless the session has moved on, and stores what of them
// passes mentor.ClosingWords.Checked.
func (w *Worker) writeClosing(ctx context.Context, job mentor.ClosingJob) error {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.JobTimeout)
	defer cancel()
	req, current, err := w.store.ClosingInput(ctx, job)
	if err != nil {
		return err
	}
	var words mentor.ClosingWords
	if current {
		if words, err = w.cfg.ClosingWriter.WriteClosing(ctx, req); err != nil {
			return err
		}
	}
	return w.store.CompleteClosing(ctx, job, words.Checked())
}
