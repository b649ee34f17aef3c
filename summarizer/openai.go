package summarizer

import (
	"context"
	"fmt"
	"strings"

	"mentormemory/llm"
	"mentormemory/mentor"
	"mentormemory/privacy"
)

// Errors a model reply can fail with, besides llm.ErrTruncated,
// llm.ErrRefused, and transport and API errors. They are wrapped, so test
// with errors.Is.
var (
	ErrEmptyReply error = llm.Kind("model returned no summary")
	ErrTooLong    error = llm.Kind(fmt.Sprintf("summary exceeds %d words", mentor.SummaryMaxWords))
)

// OpenAI is the model-backed summarizer. It is safe for concurrent use.
type OpenAI struct{ chat llm.Chat }

// NewOpenAI returns the model-backed summarizer, by default
// llm.DefaultChatModel. Name() returns "openai".
func NewOpenAI(cfg llm.Config) *OpenAI { return &OpenAI{chat: llm.NewBackgroundChat(cfg)} }

var _ mentor.Summarizer = (*OpenAI)(nil)

// Name implements mentor.Summarizer.
func (*OpenAI) Name() string { return "openai" }

// Summarize implements mentor.Summarizer. The model never sees the names in
// req or a contact detail in its text, only their placeholders (see package
// privacy). Every failure is a *mentor.Error with code CodeUpstream that
// wraps the cause.
func (s *OpenAI) Summarize(ctx context.Context, req mentor.SummaryRequest) (string, error) {
	if len(req.Turns) == 0 {
		// Nothing to fold in: no reason to pay for a model call.
		return checkSummary(strings.TrimSpace(req.Previous))
	}
	masker := privacy.NewMasker(privacy.Names{Learner: req.LearnerName, Others: req.OtherNames})
	choices, err := s.chat.Ask(ctx, llm.Prompt{System: systemPrompt(), User: userPrompt(maskRequest(masker, req))})
	if err != nil {
		return "", upstream(err)
	}
	if len(choices) == 0 {
		return "", upstream(fmt.Errorf("%w: no choices", ErrEmptyReply))
	}
	choice := choices[0]
	text := strings.TrimSpace(choice.Message.Content)
	if text == "" {
		// The refusal's text is left out: it may quote the turns.
		if strings.TrimSpace(choice.Message.Refusal) != "" {
			return "", upstream(llm.ErrRefused)
		}
		return "", upstream(fmt.Errorf("%w: empty content", ErrEmptyReply))
	}
	// A reply stopped by the token limit ends mid-sentence; storing it
	// would pass a broken summary off as a fresh one.
	if choice.FinishReason == "length" {
		return "", upstream(llm.ErrTruncated)
	}
	// Restored first: the word limit applies to the summary as stored.
	return checkSummary(masker.Restore(text))
}

// checkSummary enforces the service's word limit.
func checkSummary(text string) (string, error) {
	if n := countWords(text); n > mentor.SummaryMaxWords {
		return "", upstream(fmt.Errorf("%w: %d words", ErrTooLong, n))
	}
	return text, nil
}

func upstream(cause error) error {
	return llm.Failure("The summary model failed", cause)
}
