package mentor

import (
	"strings"
	"time"
)

// What a facilitator controls: whether the mentor learns (for one learner
// or the whole account), how long unconfirmed memories are kept, and which
// memories are forgotten.

// ErrLearningOff is the answer to a request for learning (a consolidation
// run asked for) while the facilitator has turned learning off. Background
// work that meets it does nothing and is done.
var ErrLearningOff = &Error{Code: CodeConflict, Message: "Learning is off for this learner; turn it on to learn and consolidate"}

// Retention's bounds, in days (migration 0025 holds the database to them).
const (
	MinRetentionDays = 1
	MaxRetentionDays = 3650
)

// AccountSettings are the facilitator's settings for the whole account.
type AccountSettings struct {
	// Learning false: nothing is learnt from any conversation.
	Learning bool `json:"learning"`
	// RetentionDays, when set, forgets low-confidence memories nobody
	// confirmed for that many days; nil keeps them.
	RetentionDays *int `json:"retention_days"`
}

// AccountSettingsChange changes some of the account's settings: a nil
// field is left as it is; SetRetention with RetentionDays nil turns
// retention off.
type AccountSettingsChange struct {
	Learning      *bool
	SetRetention  bool
	RetentionDays *int
}

// ValidateAccountSettingsChange refuses a change that changes nothing or a
// retention out of bounds.
func ValidateAccountSettingsChange(c AccountSettingsChange) error {
	if c.Learning == nil && !c.SetRetention {
		return Errorf(CodeInvalid, "Nothing to change: send learning (true or false) or retention_days (days, or null)")
	}
	if c.RetentionDays != nil && (*c.RetentionDays < MinRetentionDays || *c.RetentionDays > MaxRetentionDays) {
		return Errorf(CodeInvalid, "retention_days must be between %d and %d, or null to keep memories", MinRetentionDays, MaxRetentionDays)
	}
	return nil
}

// LearnerSettings are the facilitator's settings for one learner.
type LearnerSettings struct {
	LearnerID string `json:"learner_id"`
	// Learning is this learner's own setting; AccountLearning the account's.
	// The mentor learns about the learner only when both are on.
	Learning        bool `json:"learning"`
	AccountLearning bool `json:"account_learning"`
}

// JobCounts counts one kind of background work of a learner.
type JobCounts struct {
	// Queued waits for a worker (or for its time, or a retry).
	Queued int `json:"queued"`
	// Running is held by a worker now.
	Running int `json:"running"`
}

// LearningNow says whether memory is learning about a learner right now.
type LearningNow struct {
	LearnerID string `json:"learner_id"`
	// Learning is whether learning is on for the learner (settings).
	Learning      bool      `json:"learning"`
	Extracting    JobCounts `json:"extracting"`
	Consolidating JobCounts `json:"consolidating"`
	// Active: any of that work is queued or running.
	Active bool `json:"active"`
}

// SourceTurn is one conversation turn a memory was learnt from.
type SourceTurn struct {
	TurnID    int64     `json:"turn_id"`
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	// Archived: the turn's segment went to the archive (cleared or
	// archived after 50 turns); still searchable.
	Archived bool `json:"archived"`
}

// MemorySources are the turns a memory was learnt from.
type MemorySources struct {
	MemoryID string       `json:"memory_id"`
	Source   string       `json:"source"`
	Turns    []SourceTurn `json:"turns"`
	// Note explains an empty list.
	Note string `json:"note,omitempty"`
}

// WithNote explains an empty list of sources.
func (s MemorySources) WithNote() MemorySources {
	switch {
	case len(s.Turns) > 0:
	case s.Source == SourceAdded:
		s.Note = "Added by a person: not learnt from a conversation"
	default:
		s.Note = "The conversation turns it was learnt from are not recorded"
	}
	return s
}

// ForgetQuery selects the memories of one conversation (a learner's, or the
// general one when LearnerID is nil) to forget: of one type, or every one;
// learnt (created) at or after After and before Before, when given.
type ForgetQuery struct {
	LearnerID *string
	Type      MemoryType
	Before    *time.Time
	After     *time.Time
}

// ValidateForgetQuery checks the type and that the period is not empty.
func ValidateForgetQuery(q ForgetQuery) (ForgetQuery, error) {
	var err error
	if q.Type, err = parseTypeFilter(q.Type); err != nil {
		return q, err
	}
	if q.Before != nil && q.After != nil && !q.After.Before(*q.Before) {
		return q, Errorf(CodeInvalid, "after must be earlier than before")
	}
	return q, nil
}

// ParseTimeBound reads a bound of a period: an RFC 3339 time, or a date
// (YYYY-MM-DD), which stands for its start in UTC. Empty is no bound.
func ParseTimeBound(raw, name string) (*time.Time, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, raw); err == nil {
		return &t, nil
	}
	if t, err := time.Parse(time.DateOnly, raw); err == nil {
		return &t, nil
	}
	return nil, Errorf(CodeInvalid, "%s must be an RFC 3339 time (2026-03-01T09:00:00Z) or a date (2026-03-01)", name)
}
