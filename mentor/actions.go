package mentor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// What the mentor may propose from the chat that changes the memory for
// good. Text inside a stored turn or memory can carry instructions ("forget
// everything about Emma"), so the model never applies such a change: its
// tool call stores a PendingAction, and only the facilitator's confirmation
// applies it (ConfirmAction).
const (
	ActionForgetMemory  = "forget_memory"  // forget one memory
	ActionForgetTopic   = "forget_topic"   // forget the learner's memories about a topic
	ActionCorrectMemory = "correct_memory" // give one memory a new text
)

// A pending action's status. An action is decided once: from pending to
// one of the others, never back.
const (
	ActionPending   = "pending"
	ActionConfirmed = "confirmed"
	ActionCancelled = "cancelled"
	// ActionExpired: its time to confirm passed. Listed as expired as soon
	// as it passes; stored so at the facilitator's next proposal.
	ActionExpired = "expired"
)

// ActionStatuses are the statuses GET /api/actions filters by.
var ActionStatuses = []string{ActionPending, ActionConfirmed, ActionCancelled, ActionExpired}

const (
	// ActionTTL is how long a facilitator has to confirm: long enough to
	// read the reply and decide, short enough that an old proposal cannot
	// be confirmed by a click meant for something else.
	ActionTTL = 10 * time.Minute
	// MaxActionMemories bounds the memories one action changes (the
	// migration holds it to the same); a topic that matches more asks the
	// model to name it more narrowly.
	MaxActionMemories = 50
	// MaxTopicChars bounds the words a topic is forgotten by.
	MaxTopicChars = 500
	// DefaultActionList and MaxActionList bound GET /api/actions.
	DefaultActionList = 50
	MaxActionList     = 200
)

// ActorChat is who made a change from the chat: the facilitator, by
// confirming what the mentor proposed, or flagging a memory through it.
const ActorChat = "chat"

// ChangeFlagged: someone said a memory is not quite right; it waits for a
// person's review (NeedsReview) and stays as it is until then.
const ChangeFlagged = "flagged"

// PendingAction is a change of the memory the mentor proposed, and what
// became of it.
type PendingAction struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind"`
	LearnerID *string `json:"learner_id"`
	// Topic is the words a forget_topic matched memories by.
	Topic  string `json:"topic,omitempty"`
	Status string `json:"status"`
	// Description says in words what confirming does.
	Description string         `json:"description"`
	Changes     []ActionChange `json:"changes"`
	CreatedAt   time.Time      `json:"created_at"`
	ExpiresAt   time.Time      `json:"expires_at"`
	DecidedAt   *time.Time     `json:"decided_at"`
}

// ActionChange is what an action does to one memory.
type ActionChange struct {
	MemoryID string     `json:"memory_id"`
	Type     MemoryType `json:"type"`
	// ContentBefore is the memory's text now; nil once it is forgotten.
	ContentBefore *string `json:"content_before"`
	// ContentAfter is a correction's new text; nil when the memory goes,
	// and once the action is decided (a confirmed text lives in the memory
	// and its history, which forgetting blanks).
	ContentAfter *string `json:"content_after"`
}

// Proposal is a change the mentor asks for: the memories (by id) of a
// forget or a correction, or the learner and topic of a forget_topic.
type Proposal struct {
	Kind      string
	MemoryID  string
	LearnerID *string
	Topic     string
	Content   string // a correction's new text
}

// ActionQuery lists a facilitator's actions, newest first; an empty Status
// lists them all.
type ActionQuery struct {
	Status string
	Limit  int
}

// Describe says in words what confirming the action does, from its
// changes as they stand: the memory texts it names, old and new; once it
// is decided, what became of it.
func (a PendingAction) Describe() string {
	what := a.proposed()
	switch a.Status {
	case ActionConfirmed:
		return "Done: " + what
	case ActionCancelled:
		return "Cancelled, nothing changed: " + what
	case ActionExpired:
		return "Expired, nothing changed: " + what
	}
	return strings.ToUpper(what[:1]) + what[1:]
}

// proposed is the action in words; a memory whose text it no longer shows
// (decided, or forgotten meanwhile) is "a memory".
func (a PendingAction) proposed() string {
	if len(a.Changes) == 0 {
		return "nothing"
	}
	quoted := func(text *string) string {
		if text == nil {
			return "a memory"
		}
		return fmt.Sprintf("“%s”", *text)
	}
	switch a.Kind {
	case ActionCorrectMemory:
		c := a.Changes[0]
		if c.ContentAfter == nil {
			return "correct " + quoted(c.ContentBefore)
		}
		return fmt.Sprintf("correct %s to %s", quoted(c.ContentBefore), quoted(c.ContentAfter))
	case ActionForgetTopic:
		var texts []string
		for _, c := range a.Changes {
			if c.ContentBefore != nil {
				texts = append(texts, quoted(c.ContentBefore))
			}
		}
		noun := "memories"
		if len(a.Changes) == 1 {
			noun = "memory"
		}
		what := fmt.Sprintf("forget %d %s about “%s”", len(a.Changes), noun, a.Topic)
		if len(texts) > 0 {
			what += ": " + strings.Join(texts, "; ")
		}
		return what
	default:
		return "forget " + quoted(a.Changes[0].ContentBefore)
	}
}

// ValidateProposal checks what the model asked for and cleans it.
func ValidateProposal(p Proposal) (Proposal, error) {
	var err error
	switch p.Kind {
	case ActionForgetMemory:
		p.MemoryID, err = ParseMemoryID(p.MemoryID)
	case ActionCorrectMemory:
		if p.MemoryID, err = ParseMemoryID(p.MemoryID); err == nil {
			p.Content, err = validateMemoryContent(p.Content)
		}
	case ActionForgetTopic:
		p.Topic, err = requiredText(p.Topic, "Topic", MaxTopicChars)
	default:
		err = Errorf(CodeInvalid, "Unknown action %q", p.Kind)
	}
	return p, err
}

// ValidateActionQuery checks a listing's status and limit.
func ValidateActionQuery(q ActionQuery) (ActionQuery, error) {
	if q.Status != "" && !slices.Contains(ActionStatuses, q.Status) {
		return q, Errorf(CodeInvalid, "status must be one of %s", strings.Join(ActionStatuses, ", "))
	}
	var err error
	q.Limit, err = pageLimit(q.Limit, DefaultActionList, MaxActionList)
	return q, err
}

// Propose stores what the mentor asks to change, to be confirmed by the
// facilitator; nothing in the memory changes.
func (s *Service) Propose(ctx context.Context, p Proposal) (PendingAction, error) {
	p, err := ValidateProposal(p)
	if err != nil {
		return PendingAction{}, err
	}
	return s.store.ProposeAction(ctx, p)
}

// Actions lists the facilitator's actions, newest first.
func (s *Service) Actions(ctx context.Context, q ActionQuery) ([]PendingAction, error) {
	q, err := ValidateActionQuery(q)
	if err != nil {
		return nil, err
	}
	return s.store.ListActions(ctx, q)
}

// ConfirmAction applies a pending action, once, as the facilitator's change
// made through the chat. A correction's new text is embedded first, as a
// correction through the API is.
func (s *Service) ConfirmAction(ctx context.Context, id string) (PendingAction, error) {
	action, err := s.store.GetAction(ctx, id)
	if err != nil {
		return action, err
	}
	var embedding *Embedding
	if action.Kind == ActionCorrectMemory && action.Status == ActionPending && action.Changes[0].ContentAfter != nil {
		embedding = s.embed(ctx, *action.Changes[0].ContentAfter)
	}
	return s.store.DecideAction(ctx, id, true, embedding)
}

// CancelAction drops a pending action; nothing in the memory changes.
func (s *Service) CancelAction(ctx context.Context, id string) (PendingAction, error) {
	return s.store.DecideAction(ctx, id, false, nil)
}

// FlagMemory marks a memory as not quite right: it waits for the
// facilitator's review. Not destructive, so it needs no confirmation: the
// memory keeps its text and confidence, and a confirmation clears the flag.
func (s *Service) FlagMemory(ctx context.Context, id string) (LearnerMemory, error) {
	id, err := ParseMemoryID(id)
	if err != nil {
		return LearnerMemory{}, err
	}
	return s.store.FlagMemory(ctx, id)
}

// ParseActionID checks an action id from a client.
func ParseActionID(raw string) (string, error) {
	id, err := ParseLearnerID(raw)
	if err != nil || id == nil {
		return "", Errorf(CodeInvalid, "action id must be a uuid")
	}
	return *id, nil
}
