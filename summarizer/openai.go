package summarizer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"

	"mentormemory/llm"
	"mentormemory/memory"
)

// Defaults for the model's llm.Config.
const (
	DefaultModel   = "gpt-4o-mini"
	DefaultTimeout = 20 * time.Second
)

// Errors a model reply can fail with, besides transport and API errors.
// They are wrapped, so test with errors.Is.
var (
	ErrEmptyReply = errors.New("model returned no summary")
	ErrTruncated  = errors.New("model reply was cut off")
	ErrTooLong    = fmt.Errorf("summary exceeds %d words", memory.SummaryMaxWords)
)

// OpenAI is the model-backed summarizer. It is safe for concurrent use.
type OpenAI struct {
	client openai.Client
	model  string
}

// NewOpenAI returns the model-backed summarizer. Name() returns "openai".
func NewOpenAI(cfg llm.Config) *OpenAI {
	cfg = cfg.WithDefaults(DefaultModel, DefaultTimeout)
	return &OpenAI{client: llm.NewBackgroundClient(cfg), model: cfg.Model}
}

var _ memory.Summarizer = (*OpenAI)(nil)

// Name implements memory.Summarizer.
func (*OpenAI) Name() string { return "openai" }

// Summarize implements memory.Summarizer. Every failure is a *memory.Error
// with code CodeUpstream that wraps the cause.
func (s *OpenAI) Summarize(ctx context.Context, req memory.SummaryRequest) (string, error) {
	if len(req.Turns) == 0 {
		// Nothing to fold in: no reason to pay for a model call.
		return checkSummary(strings.TrimSpace(req.Previous))
	}
	resp, err := s.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: s.model,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(systemPrompt()),
			openai.UserMessage(userPrompt(req)),
		},
	})
	if err != nil {
		return "", upstream(fmt.Errorf("chat completion: %w", err))
	}
	if resp == nil || len(resp.Choices) == 0 {
		return "", upstream(fmt.Errorf("%w: no choices", ErrEmptyReply))
	}
	choice := resp.Choices[0]
	text := strings.TrimSpace(choice.Message.Content)
	if text == "" {
		if r := strings.TrimSpace(choice.Message.Refusal); r != "" {
			return "", upstream(fmt.Errorf("%w: refused: %s", ErrEmptyReply, r))
		}
		return "", upstream(fmt.Errorf("%w: empty content", ErrEmptyReply))
	}
	// A reply stopped by the token limit ends mid-sentence; storing it
	// would pass a broken summary off as a fresh one.
	if choice.FinishReason == "length" {
		return "", upstream(ErrTruncated)
	}
	return checkSummary(text)
}

// checkSummary enforces the service's word limit.
func checkSummary(text string) (string, error) {
	if n := countWords(text); n > memory.SummaryMaxWords {
		return "", upstream(fmt.Errorf("%w: %d words", ErrTooLong, n))
	}
	return text, nil
}

// upstream classifies a failure as the model's, so the HTTP layer reports
// it as such; the cause stays available to errors.Is and to the logs.
func upstream(cause error) error {
	return &memory.Error{Code: memory.CodeUpstream, Message: "The summary model failed", Cause: fmt.Errorf("openai summarizer: %w", cause)}
}
