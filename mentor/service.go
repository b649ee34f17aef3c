package mentor

import (
	"context"
	"log/slog"
	"time"
)

// SummaryBudget bounds how long an update waits for the summarizer once the
// turns are safely stored; past it the summary is marked stale instead.
const SummaryBudget = 30 * time.Second

// Service is the one implementation of the memory's behaviour. The HTTP API
// and the mentor's tools both call it, so they cannot drift apart.
type Service struct {
	store      Store
	summarizer Summarizer
	embedder   Embedder // nil: recall by words only
	// jobQueued is told when an update queued background work.
	jobQueued func()
	log       *slog.Logger
}

func NewService(store Store, summarizer Summarizer, log *slog.Logger) *Service {
	return &Service{store: store, summarizer: summarizer, log: log}
}

// OnJobQueued sets what to call when an update queued background work,
// so a worker can start on it at once.
func (s *Service) OnJobQueued(notify func()) *Service {
	s.jobQueued = notify
	return s
}

// SummarizerName tells clients which summarizer writes the summaries.
func (s *Service) SummarizerName() string { return s.summarizer.Name() }

// UpdateResult is what an update did.
type UpdateResult struct {
	Conversation ConversationRecord
	Added        int
	Archived     bool
	// SummaryErr is why the summarizer failed, when it did: the summary
	// is then stale.
	SummaryErr error
}

// Update stores new turns, then brings the summary up to date.
//
// In one transaction the store finds the posted turns not stored yet
// (UnstoredByID, UnstoredAfter), ends the live session first if it is idle
// (CurrentSession.EndsBefore), stores the new turns and advances the
// session (AdvanceSession), plans the summary (PlanSummary), writes it when
// the store has a summarizer of its own, and updates the conversation's
// record (UpdateRecord). Any other summarizer is asked only once the turns
// are committed, so a failing or slow model never loses them: the summary
// is then marked stale and the next update catches up.
func (s *Service) Update(ctx context.Context, learnerID *string, turns []Turn, regenerate bool) (UpdateResult, error) {
	turns, err := ValidateTurns(turns, time.Now())
	if err != nil {
		return UpdateResult{}, err
	}
	appended, err := s.store.AppendTurns(ctx, AppendRequest{LearnerID: learnerID, Turns: turns, Regenerate: regenerate})
	if err != nil {
		return UpdateResult{}, err
	}
	if appended.Queued && s.jobQueued != nil {
		s.jobQueued()
	}
	if appended.SummaryErr != nil {
		s.log.Warn("summary failed; marked stale", "err", appended.SummaryErr)
	}
	result := UpdateResult{Conversation: appended.Conversation, Added: appended.Added, Archived: appended.Archived}
	if appended.Job != nil {
		result.Conversation, result.SummaryErr = s.summarize(ctx, *appended.Job, appended.Conversation)
	}
	return result, nil
}

// summarize does a summary job left by a committed update and returns the
// conversation as it then is, and the summarizer's failure.
func (s *Service) summarize(ctx context.Context, job SummaryJob, committed ConversationRecord) (ConversationRecord, error) {
	// The client may hang up; the stored turns still deserve their summary.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SummaryBudget)
	defer cancel()
	summary, summaryErr := s.summarizer.Summarize(ctx, job.Request)
	var conv ConversationRecord
	var err error
	if summaryErr != nil {
		s.log.Warn("summary failed; marked stale", "summarizer", s.summarizer.Name(), "err", summaryErr)
		conv, err = s.store.MarkSummaryStale(ctx, job)
	} else {
		conv, err = s.store.SaveSummary(ctx, job, summary)
	}
	if err != nil {
		// The turns are committed; report them with the summary marked stale
		// rather than fail a request whose data is safe.
		s.log.Error("saving summary failed", "err", err)
		committed.SummaryStale = true
		return committed, summaryErr
	}
	return conv, summaryErr
}

func (s *Service) Get(ctx context.Context, learnerID *string) (*ConversationRecord, error) {
	return s.store.GetConversation(ctx, learnerID)
}

func (s *Service) Clear(ctx context.Context, learnerID *string) (bool, error) {
	return s.store.ClearConversation(ctx, learnerID)
}

// Search finds the conversations that best match the question's words,
// preferring those held in the time it names (ReadTimeReference), which
// then leaves the words to search by, and, for a question that asks when
// something happened (AsksWhen), those whose best-matching turn says when.
func (s *Service) Search(ctx context.Context, q SearchQuery) ([]SearchResult, error) {
	q, err := ValidateSearch(q)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	asksWhen := AsksWhen(q.Text)
	when := ReadTimeReference(q.Text, now)
	q.Text, q.Window = when.Text, when.Window
	limit := q.Limit
	if asksWhen {
		q.Limit = max(limit, min(2*limit, whenDepth))
	}
	results, err := s.store.Search(ctx, q)
	if err != nil || !asksWhen {
		return results, err
	}
	return preferStatedTimes(results, limit, now), nil
}

// Archive reads one of the caller's archived conversations, a page of its
// turns at a time.
func (s *Service) Archive(ctx context.Context, q ArchiveQuery) (ArchivedConversation, error) {
	q, err := ValidateArchiveQuery(q)
	if err != nil {
		return ArchivedConversation{}, err
	}
	return s.store.Archive(ctx, q)
}

func (s *Service) Learners(ctx context.Context) ([]Learner, error) {
	return s.store.ListLearners(ctx)
}

func (s *Service) AddLearner(ctx context.Context, name string) (Learner, error) {
	name, err := ValidateLearnerName(name)
	if err != nil {
		return Learner{}, err
	}
	return s.store.CreateLearner(ctx, name)
}

// RenameLearner gives the learner a new name, checked as a new learner's.
func (s *Service) RenameLearner(ctx context.Context, learnerID, name string) (Learner, error) {
	name, err := ValidateLearnerName(name)
	if err != nil {
		return Learner{}, err
	}
	return s.store.RenameLearner(ctx, learnerID, name)
}
