package extractor

import (
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"mentormemory/mentor"
)

// schemaName names the response format; the API requires a name.
const schemaName = "learner_memories"

// metadataKeys are the metadata the model fills, each a string or null. In
// strict mode every property must be required, so "not applicable" is null
// rather than absent; the parser drops the nulls.
var metadataKeys = []string{
	mentor.MetaEmotion,
	mentor.MetaValence,
	mentor.MetaResolution,
	mentor.MetaTopic,
	mentor.MetaCategory,
	mentor.MetaTrigger,
	mentor.MetaResponse,
	mentor.MetaNextTopic,
}

// responseFormat asks for a reply that follows memorySchema exactly.
func responseFormat() openai.ChatCompletionNewParamsResponseFormatUnion {
	return openai.ChatCompletionNewParamsResponseFormatUnion{
		OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:        schemaName,
				Description: openai.String("Facts worth remembering about the learner from one exchange; usually none."),
				Strict:      openai.Bool(true),
				Schema:      memorySchema(),
			},
		},
	}
}

// memorySchema is the reply's JSON schema. Strict mode wants an object at
// the top, every property required and no additional properties; ranges
// and the item limit are stated in descriptions and enforced by the parser,
// since not every compatible server supports minimum, maximum or maxItems.
func memorySchema() map[string]any {
	types := make([]string, len(mentor.MemoryTypes))
	for i, t := range mentor.MemoryTypes {
		types[i] = string(t)
	}
	metadata := map[string]any{}
	for _, key := range metadataKeys {
		metadata[key] = map[string]any{"type": []string{"string", "null"}}
	}
	item := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"type":    map[string]any{"type": "string", "enum": types},
			"content": map[string]any{"type": "string", "description": "One short third-person fact about the learner."},
			"importance": map[string]any{
				"type":        "number",
				"description": "How much this matters for mentoring the learner, from 0 to 1.",
			},
			"confidence": map[string]any{
				"type":        "number",
				"description": "How sure the exchange makes this fact, from 0 to 1.",
			},
			"metadata": map[string]any{
				"type":                 "object",
				"properties":           metadata,
				"required":             metadataKeys,
				"additionalProperties": false,
			},
			"replaces": map[string]any{
				"type":        []string{"string", "null"},
				"description": `The key of the known memory this one changes or contradicts ("k3"), or null.`,
			},
		},
		"required":             []string{"type", "content", "importance", "confidence", "metadata", "replaces"},
		"additionalProperties": false,
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"memories": map[string]any{
				"type":        "array",
				"description": fmt.Sprintf("At most %d new memories, most important first; usually empty.", MaxMemories),
				"items":       item,
			},
		},
		"required":             []string{"memories"},
		"additionalProperties": false,
	}
}
