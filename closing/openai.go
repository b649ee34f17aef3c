// Package closing writes the words a session ends with, its goodbye line
// and its summary, with a chat model (mentor.ClosingWriter). The model is
// given the session's closing state, masked (package privacy) and fenced
// off as data, and answers with a strict JSON schema; the worker checks
// the words (mentor.ClosingWords.Checked) and keeps a template for any it
// cannot use.
package closing

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"mentormemory/llm"
	"mentormemory/mentor"
	"mentormemory/privacy"
)

// ErrMalformed means the reply is not the schema's JSON object: nothing of
// it is used.
var ErrMalformed error = llm.Kind("model reply does not match the closing schema")

// OpenAI is the model-backed closing writer. It is safe for concurrent use.
type OpenAI struct{ chat llm.Chat }

// NewOpenAI returns the closing writer of cfg's chat model, by default
// llm.DefaultChatModel, which must support structured outputs.
func NewOpenAI(cfg llm.Config) *OpenAI { return &OpenAI{chat: llm.NewBackgroundChat(cfg)} }

var _ mentor.ClosingWriter = (*OpenAI)(nil)

// WriteClosing implements mentor.ClosingWriter. The model never sees the
// learner's name, the other learners' or a contact detail, only their
// placeholders, which the words get back. Every failure is a *mentor.Error
// with code CodeUpstream that wraps the cause.
func (c *OpenAI) WriteClosing(ctx context.Context, req mentor.ClosingRequest) (mentor.ClosingWords, error) {
	masker := privacy.NewMasker(privacy.Names{Learner: req.LearnerName, Others: req.OtherNames})
	choices, err := c.chat.Ask(ctx, llm.Prompt{System: systemPrompt, User: userPrompt(masker, req), Format: responseFormat()})
	if err != nil {
		return mentor.ClosingWords{}, failure(err)
	}
	content, err := llm.FormattedReply(choices, ErrMalformed)
	if err != nil {
		return mentor.ClosingWords{}, failure(err)
	}
	var words mentor.ClosingWords
	decoder := json.NewDecoder(strings.NewReader(content))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&words); err != nil {
		return mentor.ClosingWords{}, failure(fmt.Errorf("%w: %v", ErrMalformed, err))
	}
	return mentor.ClosingWords{Goodbye: masker.Restore(words.Goodbye), Summary: masker.Restore(words.Summary)}, nil
}

func failure(cause error) error {
	return llm.Failure("The closing model failed", cause)
}

// responseFormat asks for the goodbye and the summary as closingSchema's
// JSON object.
func responseFormat() openai.ChatCompletionNewParamsResponseFormatUnion {
	text := func(description string) map[string]any {
		return map[string]any{"type": "string", "description": description}
	}
	return openai.ChatCompletionNewParamsResponseFormatUnion{
		OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:        "session_closing",
				Description: openai.String("The goodbye line and the summary of one mentoring session."),
				Strict:      openai.Bool(true),
				Schema: map[string]any{
					"type": "object", "additionalProperties": false, "required": []string{"goodbye", "summary"},
					"properties": map[string]any{
						"goodbye": text("What Mr. Mentor says to the facilitator as the session ends."),
						"summary": text("The session's summary, for Mr. Mentor to reread later."),
					},
				},
			},
		},
	}
}
