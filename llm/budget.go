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
	return charged(ctx, budget, params, func() (*openai.ChatCompletion, error) {
		return client.Chat.Completions.New(ctx, params)
	})
}

// Stream is Complete with the reply streamed: onText hears each piece of
// the reply's text as the model writes it, and the completion returned is
// the stream put together, usage included. A stream cut off (the context
// cancelled, the connection dropped, the model's server failing mid-way)
// returns the error and no completion.
func Stream(ctx context.Context, client openai.Client, budget Budget, params openai.ChatCompletionNewParams, onText func(string)) (*openai.ChatCompletion, error) {
	// Without it a stream reports no usage, and the budget is charged an
	// estimate.
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	return charged(ctx, budget, params, func() (*openai.ChatCompletion, error) {
		stream := client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		var whole openai.ChatCompletionAccumulator
		for stream.Next() {
			chunk := stream.Current()
			if !whole.AddChunk(chunk) {
				return nil, Kind("the model's stream sent a chunk that does not follow the others")
			}
			if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
				onText(chunk.Choices[0].Delta.Content)
			}
		}
		if err := stream.Err(); err != nil {
			return nil, err
		}
		return &whole.ChatCompletion, nil
	})
}

// charged makes a chat completion call, charging it to budget (nil: not
// charged): before the call, one call and the tokens estimated from params;
// after it, what the model reports beyond the estimate.
func charged(ctx context.Context, budget Budget, params openai.ChatCompletionNewParams, call func() (*openai.ChatCompletion, error)) (*openai.ChatCompletion, error) {
	if budget == nil {
		return call()
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
	resp, err := call()
	if err != nil || resp == nil {
		return resp, err
	}
	used := resp.Usage.TotalTokens
	if used == 0 {
		// No usage reported: the reply's size stands for what it cost.
		used = estimate + int64(replyBytes(resp)/bytesPerToken)
	}
	// The reply was paid for and is given either way; when the rest cannot
	// be counted, the estimate is what this call cost the budget.
	_ = budget.AfterCall(context.WithoutCancel(ctx), used-estimate)
	return resp, nil
}

// replyBytes is the size of what the model wrote in resp: its texts and
// its tool calls' arguments.
func replyBytes(resp *openai.ChatCompletion) int {
	n := 0
	for _, choice := range resp.Choices {
		n += len(choice.Message.Content) + len(choice.Message.Refusal)
		for _, call := range choice.Message.ToolCalls {
			n += len(call.Function.Name) + len(call.Function.Arguments)
		}
	}
	return n
}
