package memory

import "time"

// The two speakers of a conversation turn.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Turn is one message of a conversation between a facilitator and the mentor.
// ID is the client's own turn id, when it sends one.
type Turn struct {
	ID        string    `json:"id,omitempty"`
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// ConversationUpdate is the active memory of one (facilitator, learner or
// none) conversation: the rolling summary, the last turns, and the number of
// turns in the segment not yet archived.
type ConversationUpdate struct {
	ID           string    `json:"id"`
	LearnerID    *string   `json:"learner_id"`
	Summary      string    `json:"summary"`
	SummaryStale bool      `json:"summary_stale"`
	TurnCount    int       `json:"turn_count"`
	RecentTurns  []Turn    `json:"recent_turns"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// Learner is a child or student a facilitator talks to the mentor about.
type Learner struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}
