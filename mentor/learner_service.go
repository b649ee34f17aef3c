package mentor

import (
	"context"
	"errors"
	"time"

	"mentormemory/tokens"
)

// embedBudget bounds the embedding call of a request; past it, the request
// goes on by words alone rather than keep the person waiting.
const embedBudget = 5 * time.Second

// WithEmbedder makes the service embed memories and recall messages, so
// recall ranks by meaning as well as by words.
func (s *Service) WithEmbedder(e Embedder) *Service {
	s.embedder = e
	return s
}

// embed returns the embedding of text, or nil when no embedder is
// configured or it failed: everything then works by words alone.
func (s *Service) embed(ctx context.Context, text string) *Embedding {
	if s.embedder == nil || text == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, embedBudget)
	defer cancel()
	vectors, err := s.embedder.Embed(ctx, []string{text})
	if err != nil || len(vectors) != 1 || len(vectors[0]) == 0 {
		s.log.Warn("embedding failed; using words only", "model", s.embedder.Model(), "err", err)
		return nil
	}
	return &Embedding{Model: s.embedder.Model(), Vector: vectors[0]}
}

// AddMemory stores a memory a person wrote, or reinforces the one it repeats.
func (s *Service) AddMemory(ctx context.Context, m NewMemory) (Saved, error) {
	m, err := ValidateNewMemory(m)
	if err != nil {
		return Saved{}, err
	}
	m.Source = SourceAdded
	m.Embedding = s.embed(ctx, m.Content)
	return s.store.SaveMemory(ctx, m)
}

// CorrectMemory changes what is remembered.
func (s *Service) CorrectMemory(ctx context.Context, id string, p MemoryPatch) (LearnerMemory, error) {
	p, err := ValidatePatch(p)
	if err != nil {
		return LearnerMemory{}, err
	}
	if p.Content != nil {
		p.Embedding = s.embed(ctx, *p.Content)
	}
	return s.store.UpdateMemory(ctx, id, p)
}

// ForgetMemory erases a memory.
func (s *Service) ForgetMemory(ctx context.Context, id string) error {
	return s.store.DeleteMemory(ctx, id)
}

// MemoryHistory lists every change of a memory, oldest first.
func (s *Service) MemoryHistory(ctx context.Context, id string) ([]MemoryChange, error) {
	return s.store.MemoryHistory(ctx, id)
}

// Consolidate queues a consolidation of the learner's memories now, or
// returns the run already queued or running.
func (s *Service) Consolidate(ctx context.Context, learnerID string) (ConsolidationRun, error) {
	run, err := s.store.QueueConsolidation(ctx, learnerID)
	if err == nil && s.jobQueued != nil {
		s.jobQueued()
	}
	return run, err
}

// Consolidations lists the audit trail of consolidation runs, newest first.
func (s *Service) Consolidations(ctx context.Context, learnerID *string, limit int) ([]ConsolidationRun, error) {
	limit, err := pageLimit(limit, DefaultConsolidationList, MaxConsolidationList)
	if err != nil {
		return nil, err
	}
	return s.store.ListConsolidations(ctx, learnerID, limit)
}

// Profile is the learner's profile as the last consolidation built it.
func (s *Service) Profile(ctx context.Context, learnerID string) (Profile, error) {
	return s.store.Profile(ctx, learnerID)
}

// WriteProfileLines replaces the facilitator's own lines of the learner's
// profile, which every rebuild keeps, and queues a consolidation that
// rebuilds the rest around them. It returns the profile with the new lines.
func (s *Service) WriteProfileLines(ctx context.Context, learnerID string, own []ProfileLine) (Profile, error) {
	p, err := s.store.Profile(ctx, learnerID)
	if err != nil {
		return p, err
	}
	if p, err = p.WithOwnLines(own, tokens.Count, time.Now()); err != nil {
		return p, err
	}
	if err := s.store.SaveProfile(ctx, p); err != nil {
		return p, err
	}
	// With learning off the lines are kept, and the rest of the profile
	// waits until learning is on again.
	if _, err = s.Consolidate(ctx, learnerID); errors.Is(err, ErrLearningOff) {
		err = nil
	}
	return p, err
}

func (s *Service) ListMemories(ctx context.Context, q ListQuery) ([]LearnerMemory, error) {
	q, err := ValidateListQuery(q)
	if err != nil {
		return nil, err
	}
	return s.store.ListMemories(ctx, q)
}

// RecallContext returns the memories that matter for replying to message,
// going deep when the live session calls for it (see PlanRetrieval).
func (s *Service) RecallContext(ctx context.Context, learnerID *string, message string, filter MemoryFilter) (Recall, error) {
	message, err := ValidateRecallMessage(message)
	if err != nil {
		return Recall{}, err
	}
	if filter, err = ValidateFilter(filter); err != nil {
		return Recall{}, err
	}
	session, err := s.store.LiveSession(ctx, learnerID)
	if err != nil {
		return Recall{}, err
	}
	plan := PlanRetrieval(message, session)
	q := RecallQuery{
		LearnerID: learnerID, Message: message, Filter: filter,
		Deep: plan.Deep, Emotions: plan.Emotions, SessionStart: plan.SessionStart, Embedding: s.embed(ctx, message),
	}
	recall, err := s.store.Recall(ctx, q)
	if err != nil {
		return Recall{}, err
	}
	mode := RetrievalLight
	if plan.Deep {
		mode = RetrievalDeep
	}
	recall.Retrieval = Retrieval{Mode: mode, Reasons: plan.Reasons, Semantic: q.Embedding != nil}
	return recall, nil
}
