package mentor

import (
	"context"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// With a model, the words a session ends with, its goodbye line and its
// summary, are the model's, written in the background from the closing
// state (a ClosingJob, run by the worker); without one, or when the model
// fails or writes something unfit, the templates (goodbyeLine,
// SummarizeSession) stay. A post or an end never waits for the model.

// Bounds of what a model writes for a session's end.
const (
	// MaxGoodbyeChars bounds the goodbye line: a sentence or two.
	MaxGoodbyeChars = 300
	// MaxWrittenSummaryChars bounds the model's summary of one session,
	// which follows the summary's first sentence (its day and length)
	// within the stored summary's bound.
	MaxWrittenSummaryChars = 900
)

// ClosingRequest is what a closing writer is given: the closing state,
// whose texts are what the facilitator and the mentor said, and the names
// to hide from the model.
type ClosingRequest struct {
	Closing     ClosingState
	LearnerName string // empty for general conversations
	// OtherNames are the facilitator's other learners' names.
	OtherNames []string
}

// ClosingWords are a model's goodbye line and session summary; an empty
// one leaves its template.
type ClosingWords struct {
	Goodbye string `json:"goodbye"`
	Summary string `json:"summary"`
}

// ClosingWriter writes the words a session ends with.
type ClosingWriter interface {
	WriteClosing(ctx context.Context, req ClosingRequest) (ClosingWords, error)
}

// declining is how a model's text begins when it declines the task rather
// than doing it.
var declining = regexp.MustCompile(`(?i)^\W*(i'm sorry|i am sorry|sorry,|i can['’]?t|i cannot|i'm unable|i am unable|as an ai)\b`)

// Checked keeps the words fit to use: each on one line, not empty, within
// its bound and no refusal; the others are emptied, and their templates
// stay.
func (w ClosingWords) Checked() ClosingWords {
	fit := func(text string, limit int) string {
		text = strings.Join(strings.Fields(text), " ")
		if utf8.RuneCountInString(text) > limit || declining.MatchString(text) {
			return ""
		}
		return text
	}
	return ClosingWords{Goodbye: fit(w.Goodbye, MaxGoodbyeChars), Summary: fit(w.Summary, MaxWrittenSummaryChars)}
}

// ClosingJob is a queued writing of a session's closing words, for the
// session as it stood when queued: its exchanges, the memories learnt in
// it, and whether it had ended. A session that has moved on since (a new
// exchange, a memory learnt) has a later job of its own, and this one is
// done without asking the model.
type ClosingJob struct {
	Job
	SessionID string
	Exchanges int
	Learnt    int
	Ended     bool
}

// Describes says whether the job was queued for the session as it stands.
func (j ClosingJob) Describes(closing ClosingState, ended bool) bool {
	return j.Exchanges == closing.Exchanges && j.Learnt == len(closing.NewMemories) && j.Ended == ended
}

// WithClosingWords is the session's closing state and summary with the
// model's words in place of the templates; ended is nil while the session
// is live, when the summary is not written yet.
func WithClosingWords(closing ClosingState, startedAt time.Time, ended *time.Time, words ClosingWords) (ClosingState, *string) {
	if words.Goodbye != "" {
		closing.GoodbyeLine = words.Goodbye
	}
	if ended == nil {
		return closing, nil
	}
	summary := SummarizeSession(closing, startedAt, *ended)
	if words.Summary != "" {
		summary = truncate(sessionWhen(closing, startedAt, *ended)+" "+words.Summary, sessionSummaryMax-1)
	}
	return closing, &summary
}
