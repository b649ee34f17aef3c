package mentor

import (
	"context"
	"errors"
)

// ExtractionRequest is one exchange to learn from.
type ExtractionRequest struct {
	LearnerName string // "" for the general conversation
	// OtherNames are the names of the facilitator's other learners, which
	// a model-backed extractor hides from the model as it hides the
	// learner's (see package privacy).
	OtherNames []string
	// Turns is the new exchange, oldest first: usually the facilitator's
	// message and the mentor's reply.
	Turns []Turn
	// Known are memories already held about the learner, so the model can
	// skip what is known and word repeats the same way.
	Known []LearnerMemory
}

// Extractor finds what is worth remembering in an exchange. It returns
// memories with Type, Content, Importance, Confidence and Metadata set,
// usually none; the caller validates them and fills in the rest.
type Extractor interface {
	Name() string
	Extract(ctx context.Context, req ExtractionRequest) ([]NewMemory, error)
}

// Job is a queued job as a worker holds it. Lease identifies the worker's
// claim; only the holder of the current lease can complete the job, so it
// is never applied twice.
type Job struct {
	FacilitatorID string
	ID            int64
	LearnerID     *string
	Attempts      int
	Lease         string
}

// ExtractionJob is a queued extraction: the turns of one exchange to learn
// from.
type ExtractionJob struct {
	Job
	SessionID     string
	FromTurnID    int64
	ThroughTurnID int64
}

// IdleSession is a live session nobody spoke in for SessionIdleLimit.
type IdleSession struct {
	FacilitatorID string
	LearnerID     *string
}

// ErrLeaseLost means another worker took a job over: the work of the one
// that lost it is dropped, so that the job takes effect once.
var ErrLeaseLost = errors.New("job lease lost")

// SummariesDue are a facilitator's conversations whose summary changed and
// has stood unchanged a while since, for the worker to parse for search
// (postgres.Store.RefreshSummaryVectors).
type SummariesDue struct {
	FacilitatorID   string
	ConversationIDs []string
}
