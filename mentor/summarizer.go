package mentor

import "context"

// SummaryMaxWords caps every summary. A summarizer that returns more words
// has failed, and the stored summary is then marked stale.
const SummaryMaxWords = 400

// SummaryRequest is what a summarizer is given.
//
// When Previous is empty the request is a full one: Turns holds the whole
// active segment and the summarizer writes a fresh summary. Otherwise it is
// incremental: Turns holds only the turns the previous summary does not cover
// yet, and the summarizer folds them into it.
type SummaryRequest struct {
	Previous    string
	Turns       []Turn
	LearnerName string // empty for general conversations
	// OtherNames are the names of the facilitator's other learners, which
	// a model-backed summarizer hides from the model as it hides the
	// learner's (see package privacy).
	OtherNames []string
}

// Summarizer turns conversation turns into the rolling summary.
type Summarizer interface {
	// Name is reported to clients ("offline", "openai").
	Name() string
	Summarize(ctx context.Context, req SummaryRequest) (string, error)
}
