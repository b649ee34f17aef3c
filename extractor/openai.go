package extractor

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"mentormemory/llm"
	"mentormemory/mentor"
	"mentormemory/privacy"
)

// OpenAI is the model-backed extractor. It is safe for concurrent use.
type OpenAI struct {
	chat   llm.Chat
	logger *slog.Logger
}

// NewOpenAI returns the model-backed extractor. Name() returns "openai".
// The model must support structured outputs; by default
// llm.DefaultChatModel. cfg's logger hears of memories dropped from a
// reply: how many and why, never their text.
func NewOpenAI(cfg llm.Config) *OpenAI {
	return &OpenAI{chat: llm.NewBackgroundChat(cfg), logger: llm.LoggerOf(cfg)}
}

var _ mentor.Extractor = (*OpenAI)(nil)

// Name implements mentor.Extractor.
func (*OpenAI) Name() string { return "openai" }

// Extract implements mentor.Extractor. It returns the memories with Type,
// Content, Importance, Confidence and Metadata set and checked by
// mentor.ValidateNewMemory; see parseReply for what a reply may get wrong.
// The model never sees the names in req or a contact detail in its text,
// only their placeholders (see package privacy).
// Every failure is a *mentor.Error with code CodeUpstream that wraps the
// cause, and comes with no memories.
func (e *OpenAI) Extract(ctx context.Context, req mentor.ExtractionRequest) ([]mentor.NewMemory, error) {
	if len(req.Turns) == 0 {
		return nil, nil
	}
	masker := privacy.NewMasker(privacy.Names{Learner: req.LearnerName, Others: req.OtherNames})
	choices, err := e.chat.Ask(ctx, llm.Prompt{System: systemPrompt(), User: userPrompt(maskRequest(masker, req)), Format: responseFormat()})
	if err != nil {
		return nil, upstream(err)
	}
	reply, err := llm.FormattedReply(choices, ErrMalformed)
	if err != nil {
		return nil, upstream(err)
	}
	content := strings.TrimSpace(reply)
	if content == "" {
		return nil, upstream(fmt.Errorf("%w: empty reply", ErrMalformed))
	}
	p, err := parseReply(content, masker.Restore)
	if err != nil {
		return nil, upstream(err)
	}
	if unknown := resolveReplaces(p.memories, shownKnown(req.Known)); unknown > 0 {
		e.logger.WarnContext(ctx, "extractor ignored replaced memories it was never shown", "count", unknown)
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

func upstream(cause error) error {
	return llm.Failure("The memory extraction model failed", cause)
}
