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

// A memory's status: only current memories are recalled. The others stay
// listed, and in the memory's history, for a person to see.
const (
	StatusCurrent    = "current"
	StatusSuperseded = "superseded" // a newer memory contradicts it
	StatusExpired    = "expired"    // its moment has passed
	StatusResolved   = "resolved"   // a later breakthrough settled it
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
	Mentions int `json:"mentions"`
	// Status is current, or why the memory left recall; SupersededBy names
	// the memory that replaced it.
	Status       string  `json:"status"`
	SupersededBy *string `json:"superseded_by"`
	// NeedsReview asks a person to look at a change made without one.
	NeedsReview bool      `json:"needs_review"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// LastSeenAt is when the fact was last learnt or confirmed; Confidence
	// decays from there (ConfidenceNow).
	LastSeenAt time.Time `json:"last_seen_at"`
	// CorrectedAt is when a person last corrected it, nil when never: the
	// list and a correction's answer carry it, other reads leave it out.
	CorrectedAt *time.Time `json:"corrected_at,omitempty"`
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
	// Replaces names a known memory this one contradicts (the extractor
	// says so), which it supersedes.
	Replaces *string `json:"-"`
	// JobID is the extraction job it was learnt in, for its history.
	JobID *int64 `json:"-"`
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
	// Confirm says a person confirms the memory as it stands (or as
	// corrected): its confidence becomes 1 and its decay starts again.
	Confirm   bool       `json:"confirm"`
	Embedding *Embedding `json:"-"`
}

// Change names what a patch does to a memory, for its history: a
// confirmation alone, or a correction.
func (p MemoryPatch) Change() string {
	if p.Confirm && !p.changesFields() {
		return ChangeConfirmed
	}
	return ChangeCorrected
}

// changesFields reports whether the patch changes any of the memory's
// fields, as a confirmation alone does not.
func (p MemoryPatch) changesFields() bool {
	return p.Type != nil || p.Content != nil || p.Importance != nil || p.Confidence != nil || p.Metadata != nil
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
	// Superseded is the known memory the new one contradicts and replaced,
	// if any.
	Superseded *string `json:"superseded,omitempty"`
}

// MemoryChange is one entry of a memory's history.
type MemoryChange struct {
	ID        int64   `json:"id"`
	MemoryID  string  `json:"memory_id"`
	Change    string  `json:"change"`
	Actor     string  `json:"actor"`
	JobID     *int64  `json:"job_id"`
	SessionID *string `json:"session_id"`
	// RelatedMemoryID is the memory that superseded this one.
	RelatedMemoryID  *string   `json:"related_memory_id"`
	ContentBefore    *string   `json:"content_before"`
	ContentAfter     *string   `json:"content_after"`
	ConfidenceBefore *float64  `json:"confidence_before"`
	ConfidenceAfter  *float64  `json:"confidence_after"`
	StatusAfter      *string   `json:"status_after"`
	At               time.Time `json:"at"`
}

// Changes to a memory, and who made them.
const (
	ChangeCreated    = "created"
	ChangeMerged     = "merged"
	ChangeConfirmed  = "confirmed"
	ChangeCorrected  = "corrected"
	ChangeSuperseded = "superseded"
	ChangeExpired    = "expired"
	ChangeResolved   = "resolved"
	ChangeForgotten  = "forgotten"

	ActorExtraction    = "extraction"
	ActorConsolidation = "consolidation"
	ActorFacilitator   = "facilitator"
	// ActorRetention is the account's retention setting, applied by the
	// worker's sweep.
	ActorRetention = "retention"
)

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
	// CurrentOnly leaves out the superseded, expired and resolved ones.
	CurrentOnly bool
	Limit       int
	Offset      int
}
