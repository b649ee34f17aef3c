// Package tools gives the mentor's model function-calling access to the
// memory: the tool definitions it is offered and the executor that runs its
// calls as the signed-in facilitator, through the same service, and so the
// same row-level security, as the HTTP API.
package tools

import (
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

// Tool names, as the model calls them.
const (
	GetConversationMemory     = "get_conversation_memory"
	SearchConversationHistory = "search_conversation_history"
	RecallLearnerMemories     = "recall_learner_memories"
)

// Definitions returns the tools in OpenAI's function-calling form. Every
// schema is strict: each property is listed in required, optional ones are
// nullable, and no other property is allowed.
func Definitions() []openai.ChatCompletionToolUnionParam {
	return []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:   GetConversationMemory,
			Strict: openai.Bool(true),
			Description: openai.String("Read the rolling summary and latest turns of the facilitator's " +
				"earlier conversations with you about one learner, or the general conversation when " +
				"learner_id is null. Use it when the facilitator refers to something discussed before."),
			Parameters: shared.FunctionParameters{
				"type": "object",
				"properties": map[string]any{
					"learner_id": map[string]any{
						"type":        []string{"string", "null"},
						"description": "The learner's id (uuid), or null for the general conversation.",
					},
				},
				"required":             []string{"learner_id"},
				"additionalProperties": false,
			},
		}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:   SearchConversationHistory,
			Strict: openai.Bool(true),
			Description: openai.String("Search every earlier conversation with this facilitator, about " +
				"all their learners, for a topic, advice given or an event. Returns the best matches " +
				"with their summaries and matching turns."),
			Parameters: shared.FunctionParameters{
				"type": "object",
				"properties": map[string]any{
					"search": map[string]any{
						"type":        "string",
						"description": "What to look for, in a few words or a natural question.",
					},
					"include_archive": map[string]any{
						"type":        []string{"boolean", "null"},
						"description": "Also search archived conversations (older history). Defaults to true.",
					},
				},
				"required":             []string{"search", "include_archive"},
				"additionalProperties": false,
			},
		}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:   RecallLearnerMemories,
			Strict: openai.Bool(true),
			Description: openai.String("Recall what you know about a learner that matters for a topic: " +
				"struggles and what worked, personal details, how they like to learn, unfinished threads, " +
				"and how they tend to feel. Use it before advising on something specific to the learner."),
			Parameters: shared.FunctionParameters{
				"type": "object",
				"properties": map[string]any{
					"learner_id": map[string]any{
						"type":        []string{"string", "null"},
						"description": "The learner's id (uuid), or null for what is known about the family in general.",
					},
					"about": map[string]any{
						"type":        "string",
						"description": "The topic or situation to recall memories for, in a few words or a sentence.",
					},
					"type": map[string]any{
						"type":        []string{"string", "null"},
						"enum":        []any{"academic", "personal", "preference", "context", nil},
						"description": "Only memories of this type, or null for all types.",
					},
					"emotion": map[string]any{
						"type":        []string{"string", "null"},
						"description": "Only memories recorded with this feeling (e.g. frustrated, anxious), or null.",
					},
				},
				"required":             []string{"learner_id", "about", "type", "emotion"},
				"additionalProperties": false,
			},
		}),
	}
}
