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
		function(GetConversationMemory,
			"Read the rolling summary and latest turns of the facilitator's earlier conversations with you about one learner, or the general conversation when learner_id is null. Use it when the facilitator refers to something discussed before.",
			nullable("learner_id", "string", "The learner's id (uuid), or null for the general conversation."),
		),
		function(SearchConversationHistory,
			"Search every earlier conversation with this facilitator, about all their learners, for a topic, advice given or an event. Returns the best matches with their summaries and matching turns.",
			given("search", "string", "What to look for, in a few words or a natural question."),
			nullable("include_archive", "boolean", "Also search archived conversations (older history). Defaults to true."),
		),
		function(RecallLearnerMemories,
			"Recall what you know about a learner that matters for a topic: struggles and what worked, personal details, how they like to learn, unfinished threads, and how they tend to feel. Use it before advising on something specific to the learner.",
			nullable("learner_id", "string", "The learner's id (uuid), or null for what is known about the family in general."),
			given("about", "string", "The topic or situation to recall memories for, in a few words or a sentence."),
			nullable("type", "string", "Only memories of this type, or null for all types.").
				oneOf("academic", "personal", "preference", "context"),
			nullable("emotion", "string", "Only memories recorded with this feeling (e.g. frustrated, anxious), or null."),
		),
	}
}

// property is one argument of a tool, with its JSON schema.
type property struct {
	name   string
	schema map[string]any
}

// given is an argument the model must give a value of type typ.
func given(name, typ, description string) property {
	return property{name, map[string]any{"type": typ, "description": description}}
}

// nullable is an optional argument: strict mode wants every property
// required, so the model leaves one out by giving null.
func nullable(name, typ, description string) property {
	return property{name, map[string]any{"type": []string{typ, "null"}, "description": description}}
}

// oneOf limits a nullable argument to values, or null.
func (p property) oneOf(values ...any) property {
	p.schema["enum"] = append(values, nil)
	return p
}

// function is a strict function tool taking properties, each required.
func function(name, description string, properties ...property) openai.ChatCompletionToolUnionParam {
	schema := map[string]any{}
	required := make([]string, len(properties))
	for i, p := range properties {
		schema[p.name] = p.schema
		required[i] = p.name
	}
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        name,
		Strict:      openai.Bool(true),
		Description: openai.String(description),
		Parameters: shared.FunctionParameters{
			"type":                 "object",
			"properties":           schema,
			"required":             required,
			"additionalProperties": false,
		},
	})
}
