package memory

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
	Conversation ConversationUpdate
	Added        int
	Archived     bool
}

// Update stores new turns, then brings the summary up to date. The turns are
// committed before the summarizer is asked, so a failing or slow model never
// loses them: the summary is then marked stale and the next update catches
// up.
func (s *Service) Update(ctx context.Context, learnerID *string, turns []Turn, regenerate bool) (UpdateResult, error) {
	turns, err := ValidateTurns(turns)
	if err != nil {
		return UpdateResult{}, err
	}
	inline, _ := s.summarizer.(InlineSummarizer)
	appended, err := s.store.AppendTurns(ctx, learnerID, turns, regenerate, inline)
	if err != nil {
		return UpdateResult{}, err
	}
	if appended.Queued && s.jobQueued != nil {
		s.jobQueued()
	}
	result := UpdateResult{Conversation: appended.Conversation, Added: appended.Added, Archived: appended.Archived}
	if appended.Job == nil {
		return result, nil
	}

	// The client may hang up; the stored turns still deserve their summary.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SummaryBudget)
	defer cancel()
	summary, err := s.summarizer.Summarize(ctx, appended.Job.Request)
	var conv ConversationUpdate
	if err != nil {
		s.log.Warn("summary failed; marked stale", "summarizer", s.summarizer.Name(), "err", err)
		conv, err = s.store.MarkSummaryStale(ctx, *appended.Job)
	} else {
		conv, err = s.store.SaveSummary(ctx, *appended.Job, summary)
	}
	if err != nil {
		// The turns are committed; report them with the summary marked stale
		// rather than fail a request whose data is safe.
		s.log.Error("saving summary failed", "err", err)
		result.Conversation.SummaryStale = true
		return result, nil
	}
	result.Conversation = conv
	return result, nil
}

func (s *Service) Get(ctx context.Context, learnerID *string) (*ConversationUpdate, error) {
	return s.store.GetConversation(ctx, learnerID)
}

func (s *Service) Clear(ctx context.Context, learnerID *string) (bool, error) {
	return s.store.ClearConversation(ctx, learnerID)
}

func (s *Service) Search(ctx context.Context, q SearchQuery) ([]SearchResult, error) {
	q, err := ValidateSearch(q)
	if err != nil {
		return nil, err
	}
	return s.store.Search(ctx, q)
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
