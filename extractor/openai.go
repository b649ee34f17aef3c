package extractor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"

	"mentormemory/llm"
	"mentormemory/memory"
)

// Defaults for Config.
const (
	DefaultModel   = "gpt-4o-mini"
	DefaultTimeout = 20 * time.Second
)

// Errors a model reply can fail with besides ErrMalformed and transport and
// API errors. They are wrapped, so test with errors.Is.
var (
	ErrTruncated = errors.New("model reply was cut off")
	ErrRefused   = errors.New("model refused to extract")
)

// Config configures NewOpenAI.
type Config struct {
	// The model must support structured outputs; default gpt-4o-mini, 20s.
	llm.Config
	// Logger, when set, hears of memories dropped from a reply: how many and
	// why, never their text.
	Logger *slog.Logger
}

// OpenAI is the model-backed extractor. It is safe for concurrent use.
type OpenAI struct {
	client openai.Client
	model  string
	logger *slog.Logger
}

// NewOpenAI returns the model-backed extractor. Name() returns "openai".
func NewOpenAI(cfg Config) *OpenAI {
	model := cfg.WithDefaults(DefaultModel, DefaultTimeout)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &OpenAI{client: llm.NewBackgroundClient(model), model: model.Model, logger: logger}
}

var _ memory.Extractor = (*OpenAI)(nil)

// Name implements memory.Extractor.
func (*OpenAI) Name() string { return "openai" }

// Extract implements memory.Extractor. It returns the memories with Type,
// Content, Importance, Confidence and Metadata set and checked by
// memory.ValidateNewMemory; see parseReply for what a reply may get wrong.
// Every failure is a *memory.Error with code CodeUpstream that wraps the
// cause, and comes with no memories.
func (e *OpenAI) Extract(ctx context.Context, req memory.ExtractionRequest) ([]memory.NewMemory, error) {
	if len(req.Turns) == 0 {
		return nil, nil
	}
	resp, err := e.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: e.model,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(systemPrompt()),
			openai.UserMessage(userPrompt(req)),
		},
		ResponseFormat: responseFormat(),
	})
	if err != nil {
		return nil, upstream(fmt.Errorf("chat completion: %w", err))
	}
	if resp == nil || len(resp.Choices) == 0 {
		return nil, upstream(fmt.Errorf("%w: no choices", ErrMalformed))
	}
	choice := resp.Choices[0]
	if r := strings.TrimSpace(choice.Message.Refusal); r != "" {
		return nil, upstream(fmt.Errorf("%w: %s", ErrRefused, r))
	}
	// JSON cut off by the token limit fails to parse anyway; saying why
	// points at the limit rather than at the model's manners.
	if choice.FinishReason == "length" {
		return nil, upstream(ErrTruncated)
	}
	content := strings.TrimSpace(choice.Message.Content)
	if content == "" {
		return nil, upstream(fmt.Errorf("%w: empty reply", ErrMalformed))
	}
	p, err := parseReply(content)
	if err != nil {
		return nil, upstream(err)
	}
	if len(p.dropped) > 0 || p.overLimit > 0 {
		reasons := make([]string, len(p.dropped))
		for i, d := range p.dropped {
			reasons[i] = d.Error()
		}
		e.logger.WarnContext(ctx, "extractor dropped memories from the model's reply",
			"invalid", len(p.dropped), "reasons", reasons, "over_limit", p.overLimit, "kept", len(p.memories))
	}
	return p.memories, nil
}

// upstream classifies a failure as the model's, so the HTTP layer reports
// it as such; the cause stays available to errors.Is and to the logs.
func upstream(cause error) error {
	return &memory.Error{Code: memory.CodeUpstream, Message: "The memory extraction model failed", Cause: fmt.Errorf("openai extractor: %w", cause)}
}
