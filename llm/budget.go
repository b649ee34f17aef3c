package llm

import (
	"context"
	"encoding/json"

	"github.com/openai/openai-go/v3"
)

// Budget is charged for every chat completion, whoever asks for it (see
// mentor.ModelBudget): before the call, one call and the tokens estimated
// from the request's size; after it, the tokens the model reports beyond
// the estimate.
type Budget interface {
	BeforeCall(ctx context.Context, estimatedTokens int64) error
	AfterCall(ctx context.Context, extraTokens int64) error
}

// bytesPerToken turns a request's size into its estimated tokens: about
// four characters of English make a token, and the request's JSON is a
// little longer than its text, so the estimate errs on the generous side.
const bytesPerToken = 4

// Complete asks client for a chat completion charged to budget (nil: not
// charged). A request the budget refuses is never sent, and the refusal is
// returned as it is: see Failure.
func Complete(ctx context.Context, client openai.Client, budget Budget, params openai.ChatCompletionNewParams) (*openai.ChatCompletion, error) {
	if budget == nil {
		return client.Chat.Completions.New(ctx, params)
	}
	request, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	estimate := int64(len(request)/bytesPerToken + 1)
	if err := budget.BeforeCall(ctx, estimate); err != nil {
		return nil, err
	}
	// A call that fails keeps its estimate charged: it may have cost as
	// much.
	resp, err := client.Chat.Completions.New(ctx, params)
	if err != nil || resp == nil {
		return resp, err
	}
	used := resp.Usage.TotalTokens
	if used == 0 {
		// No usage reported: the reply's size stands for what it cost.
		used = estimate + int64(len(resp.RawJSON())/bytesPerToken)
	}
	// The reply was paid for and is given either way; when the rest cannot
	// be counted, the estimate is what this call cost the budget.
	_ = budget.AfterCall(context.WithoutCancel(ctx), used-estimate)
	return resp, nil
}
