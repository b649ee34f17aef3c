package mentor

import "context"

// Quotas count usage against limits: the store, which keeps the counters.
type Quotas interface {
	// UseQuotas adds every charge to its counter, as the caller, all or
	// none: it fails with CodeRateLimited and adds nothing when one charge
	// would take its counter past its limit.
	UseQuotas(ctx context.Context, charges ...Charge) error
}

// ModelBudget is the caller's daily budget of model calls and tokens,
// charged for every chat model call whoever makes it: the counselor, the
// summaries, the extraction of memories. A call is charged before it is
// made, one call and the tokens estimated from its size, so a request too
// large for what is left of the day is refused before it costs anything;
// after it, the tokens the model reports beyond the estimate are added. A
// call is thus charged the larger of its estimate and its reported usage.
type ModelBudget struct {
	quotas Quotas
	limits Limits
}

func NewModelBudget(quotas Quotas, limits Limits) *ModelBudget {
	return &ModelBudget{quotas: quotas, limits: limits}
}

// BeforeCall charges one call and its estimated tokens. It fails with
// CodeRateLimited when either would pass the day's limit, and with
// CodeTooLarge when the call alone needs more tokens than a whole day
// allows, which waiting would not mend.
func (b *ModelBudget) BeforeCall(ctx context.Context, estimatedTokens int64) error {
	if limit := int64(b.limits.ModelTokensPerDay); limit > 0 && estimatedTokens > limit {
		return Errorf(CodeTooLarge, "This needs more of the model than a whole day's budget (about %d tokens against %d); send less", estimatedTokens, limit)
	}
	var charges []Charge
	if c, ok := b.limits.Charge(ModelCalls, 1); ok {
		charges = append(charges, c)
	}
	if c, ok := b.limits.Charge(ModelTokens, estimatedTokens); ok {
		charges = append(charges, c)
	}
	if len(charges) == 0 {
		return nil
	}
	return b.quotas.UseQuotas(ctx, charges...)
}

// AfterCall adds the tokens a call used beyond its estimate. They were
// spent, so they count even past the limit; the next call is refused.
func (b *ModelBudget) AfterCall(ctx context.Context, extraTokens int64) error {
	if b.limits.ModelTokensPerDay == 0 || extraTokens <= 0 {
		return nil
	}
	return b.quotas.UseQuotas(ctx, Charge{Counter: ModelTokens, Amount: extraTokens})
}
