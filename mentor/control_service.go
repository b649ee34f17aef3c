package mentor

import "context"

// MemorySources lists the conversation turns a memory was learnt from,
// with a note when there are none.
func (s *Service) MemorySources(ctx context.Context, id string) (MemorySources, error) {
	return s.store.MemorySources(ctx, id)
}

// ForgetMemories forgets every memory of a conversation the query selects
// (a type, a period) and returns how many were forgotten.
func (s *Service) ForgetMemories(ctx context.Context, q ForgetQuery) (int, error) {
	q, err := ValidateForgetQuery(q)
	if err != nil {
		return 0, err
	}
	return s.store.ForgetMemories(ctx, q)
}

// LearningNow says whether memory is learning about the learner now.
func (s *Service) LearningNow(ctx context.Context, learnerID string) (LearningNow, error) {
	return s.store.LearningNow(ctx, learnerID)
}

func (s *Service) LearnerSettings(ctx context.Context, learnerID string) (LearnerSettings, error) {
	return s.store.LearnerSettings(ctx, learnerID)
}

// SetLearnerLearning turns learning about the learner on or off. Off, no
// exchange is learnt from and no consolidation runs; on again, the
// exchanges posted meanwhile stay unlearnt.
func (s *Service) SetLearnerLearning(ctx context.Context, learnerID string, learning bool) (LearnerSettings, error) {
	return s.store.SetLearnerLearning(ctx, learnerID, learning)
}

func (s *Service) AccountSettings(ctx context.Context) (AccountSettings, error) {
	return s.store.AccountSettings(ctx)
}

// ChangeAccountSettings changes the account's learning or retention.
func (s *Service) ChangeAccountSettings(ctx context.Context, c AccountSettingsChange) (AccountSettings, error) {
	if err := ValidateAccountSettingsChange(c); err != nil {
		return AccountSettings{}, err
	}
	return s.store.ChangeAccountSettings(ctx, c)
}
