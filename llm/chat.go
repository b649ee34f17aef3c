package llm

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
)

// Defaults of the chat model that writes summaries and extracts memories.
const (
	DefaultChatModel   = "gpt-4o-mini"
	DefaultChatTimeout = 20 * time.Second
)

// Failures of a model's reply that every adapter may meet. They are
// wrapped, so test with errors.Is.
var (
	// ErrTruncated means the token limit stopped the model's reply mid-way.
	ErrTruncated error = Kind("model reply was cut off")
	// ErrRefused means the model declined to answer.
	ErrRefused error = Kind("refusal")
)

// Chat is a chat model that a background task asks one question: a system
// prompt and a user prompt, no history, no tools. It is safe for concurrent
// use.
type Chat struct {
	client openai.Client
	model  string
	budget Budget
	logger *slog.Logger
}

// NewBackgroundChat returns the chat model of cfg, with DefaultChatModel and
// DefaultChatTimeout where cfg leaves them out, and the retries of
// NewBackgroundClient.
func NewBackgroundChat(cfg Config) Chat {
	cfg = cfg.WithDefaults(DefaultChatModel, DefaultChatTimeout)
	return Chat{client: NewBackgroundClient(cfg), model: cfg.Model, budget: cfg.Budget, logger: LoggerOf(cfg)}
}

// LoggerOf is cfg's logger, or one that logs nothing.
func LoggerOf(cfg Config) *slog.Logger {
	if cfg.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return cfg.Logger
}

// loggedPromptRunes is how much of a prompt the debug log shows: enough to
// tell which task asked and what about, never a whole conversation, which
// is memory text.
const loggedPromptRunes = 200

// Prompt is one question to a chat model.
type Prompt struct {
	System, User string
	// Format, when set, is the schema the reply must follow.
	Format openai.ChatCompletionNewParamsResponseFormatUnion
}

// Ask sends p and returns the reply's choices, which may be none. The user
// prompt is logged at debug level only, and only its first
// loggedPromptRunes characters.
func (c Chat) Ask(ctx context.Context, p Prompt) ([]openai.ChatCompletionChoice, error) {
	choices, _, err := c.AskCounted(ctx, p)
	return choices, err
}

// AskCounted is Ask that also says how many tokens the model reported the
// call cost (0 when it reported none).
func (c Chat) AskCounted(ctx context.Context, p Prompt) ([]openai.ChatCompletionChoice, int64, error) {
	c.logger.DebugContext(ctx, "model prompt", "model", c.model,
		"user_chars", utf8.RuneCountInString(p.User), "user_start", cut(p.User, loggedPromptRunes))
	resp, err := Complete(ctx, c.client, c.budget, openai.ChatCompletionNewParams{
		Model: c.model,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(p.System),
			openai.UserMessage(p.User),
		},
		ResponseFormat: p.Format,
	})
	if err != nil {
		return nil, 0, fmt.Errorf("chat completion: %w", err)
	}
	if resp == nil {
		return nil, 0, nil
	}
	return resp.Choices, resp.Usage.TotalTokens, nil
}

// FormattedReply is the content of the first of choices, the reply to a
// Prompt with a Format. It fails with malformed when there is no choice,
// with ErrRefused when the model declined, and with ErrTruncated when the
// token limit cut the reply off.
func FormattedReply(choices []openai.ChatCompletionChoice, malformed error) (string, error) {
	if len(choices) == 0 {
		return "", fmt.Errorf("%w: no choices", malformed)
	}
	choice := choices[0]
	// The refusal's text is left out: it may quote the prompt's material.
	if strings.TrimSpace(choice.Message.Refusal) != "" {
		return "", ErrRefused
	}
	// JSON cut off by the token limit fails to parse anyway; saying why
	// points at the limit rather than at the model's manners.
	if choice.FinishReason == "length" {
		return "", ErrTruncated
	}
	return choice.Message.Content, nil
}

// cut returns the first n runes of s, with an ellipsis when it cut any.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
