package mentor

import (
	"context"
	"time"
)

// MemoryType says what a learner memory is about.
type MemoryType string

const (
	// Academic: struggles, breakthroughs, explanations that worked.
	Academic MemoryType = "academic"
	// Personal: hobbies, pets, family, schedule, interests.
	Personal MemoryType = "personal"
	// Preference: communication style, pacing, emotional responses.
	Preference MemoryType = "preference"
	// Context: session continuity, unfinished threads.
	Context MemoryType = "context"
)

// MemoryTypes lists every type, in the order recall groups them.
var MemoryTypes = []MemoryType{Academic, Personal, Preference, Context}

// Where a memory came from.
const (
	SourceExtracted = "extracted" // the model found it in a conversation
	SourceAdded     = "added"     // a person added it through the API
)

// LearnerMemory is one thing the mentor knows about a learner (or, with no
// learner, about the facilitator's situation in general).
type LearnerMemory struct {
	ID         string     `json:"id"`
	LearnerID  *string    `json:"learner_id"`
	Type       MemoryType `json:"type"`
	Content    string     `json:"content"`
	Importance float64    `json:"importance"`
	Confidence float64    `json:"confidence"`
	// Metadata holds emotion (whenever a feeling is present) and the
	// type-specific keys: valence, resolution, topic, category, trigger,
	// response, next_topic.
	Metadata Metadata `json:"metadata"`
	Source   string   `json:"source"`
	// SessionID is the session the memory was learnt in, if any.
	SessionID *string `json:"session_id"`
	// SourceTurnIDs are the conversation turns it was extracted from.
	SourceTurnIDs []int64 `json:"source_turn_ids"`
	// Mentions counts how often the same fact was learnt; repeats are merged
	// into one memory and raise its confidence and importance.
	Mentions   int       `json:"mentions"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	LastSeenAt time.Time `json:"last_seen_at"`
}

// Metadata is a memory's free-form attributes: short strings, numbers and
// booleans under lower-case keys.
type Metadata map[string]any

// Emotion returns the feeling recorded with a memory, or "".
func (m Metadata) Emotion() string {
	s, _ := m[MetaEmotion].(string)
	return s
}

// Metadata keys with a meaning to the service.
const (
	MetaEmotion    = "emotion"
	MetaValence    = "valence"
	MetaResolution = "resolution"
	MetaTopic      = "topic"
	MetaCategory   = "category"
	MetaTrigger    = "trigger"
	MetaResponse   = "response"
	MetaNextTopic  = "next_topic"
)

// NewMemory is a memory to store, from a person or from extraction.
type NewMemory struct {
	LearnerID     *string    `json:"learner_id"`
	Type          MemoryType `json:"type"`
	Content       string     `json:"content"`
	Importance    float64    `json:"importance"`
	Confidence    float64    `json:"confidence"`
	Metadata      Metadata   `json:"metadata"`
	SessionID     *string    `json:"session_id,omitempty"`
	SourceTurnIDs []int64    `json:"source_turn_ids,omitempty"`
	Source        string     `json:"-"`
	// Embedding of Content, when an embedding model is configured.
	Embedding *Embedding `json:"-"`
}

// Embedding is a vector of meaning and the model that produced it; vectors
// of different models are never compared.
type Embedding struct {
	Model  string
	Vector []float32
}

// MemoryPatch corrects a memory; nil fields stay as they are. Metadata,
// when given, replaces the old metadata as a whole.
type MemoryPatch struct {
	Type       *MemoryType `json:"type"`
	Content    *string     `json:"content"`
	Importance *float64    `json:"importance"`
	Confidence *float64    `json:"confidence"`
	Metadata   Metadata    `json:"metadata"`
	Embedding  *Embedding  `json:"-"`
}

// MemoryFilter narrows memories by type and by metadata. Empty fields match
// everything; text comparisons ignore case.
type MemoryFilter struct {
	Type     MemoryType
	Emotion  string
	Valence  string
	Category string
	Topic    string
}

// Saved is the outcome of storing a memory.
type Saved struct {
	Memory LearnerMemory `json:"memory"`
	// Merged is true when the memory repeated one already known, which was
	// reinforced instead of storing a copy.
	Merged bool `json:"merged"`
}

// Embedder turns text into vectors of meaning.
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ListQuery pages through a facilitator's memories, newest first.
type ListQuery struct {
	// LearnerID picks one learner's memories, or with nil the general ones,
	// unless All asks for every memory of the facilitator.
	LearnerID *string
	All       bool
	Filter    MemoryFilter
	Limit     int
	Offset    int
}
