package mentor

import (
	"context"
	"time"
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
