package mentor

// Retrieval depths. Light retrieval runs on every turn; deep retrieval runs
// when the conversation calls for more (see PlanRetrieval); none, when the
// memory could not be read and the counselor answered without it.
const (
	RetrievalLight = "light"
	RetrievalDeep  = "deep"
	RetrievalNone  = "none"
)

// How many memories of each group recall returns.
const (
	RecallAcademic = 5
	// RecallPersonal bounds the personal, preference and context groups
	// alike.
	RecallPersonal = 3
	// RecallEmotional bounds the emotional patterns deep retrieval adds.
	RecallEmotional = 3
	// RecallSessionStart is how many of the learner's memories of each type
	// a session's first message brings whatever it says: the most
	// important, and of continuity the newest. Every other memory, on every
	// message, comes only when the message is relevant to it, or when a
	// filter by what was recorded with it (a feeling, a topic) chose it.
	RecallSessionStart = 2
)

// RecallQuery asks for the memories that matter for the next reply.
type RecallQuery struct {
	LearnerID *string
	Message   string
	Filter    MemoryFilter
	// Deep widens the search: word similarity for misspellings, the
	// facilitator's general memories, and emotional patterns.
	Deep bool
	// Emotions are the feelings the message shows; deep retrieval brings up
	// memories of how the learner responds to them.
	Emotions []string
	// SessionStart says the message opens a session: the mentor greets the
	// learner before any topic is named, so recall also brings what it most
	// needs to know of them (see RecallSessionStart).
	SessionStart bool
	// Embedding of Message, when an embedding model is configured.
	Embedding *Embedding
}

// Recall is what the mentor should have in mind for the next reply.
type Recall struct {
	Academic    []RecalledMemory `json:"academic"`
	Personal    []RecalledMemory `json:"personal"`
	Preferences []RecalledMemory `json:"preferences"`
	// Context holds the continuity memories the message is relevant to (and
	// on a session's first message the newest), newest first.
	Context []RecalledMemory `json:"context"`
	// EmotionalPatterns are how the learner responds to the feelings the
	// message shows, brought up by deep retrieval: preferences about an
	// emotional response (category emotional_response, or a trigger or a
	// response in the metadata), and preferences learnt with the feeling
	// more than once. A fact that merely carries the feeling is not one.
	EmotionalPatterns []RecalledMemory `json:"emotional_patterns"`
	Retrieval         Retrieval        `json:"retrieval"`
}

// RecalledMemory is a memory with the score that ranked it.
type RecalledMemory struct {
	LearnerMemory
	Score float64 `json:"score"`
}

// Retrieval says which retrieval ran and why.
type Retrieval struct {
	Mode    string   `json:"mode"`
	Reasons []string `json:"reasons"`
	// Semantic is true when meaning (embeddings) took part in the ranking.
	Semantic bool `json:"semantic"`
}
