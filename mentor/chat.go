package mentor

import (
	"strings"
	"time"
	_ "time/tzdata" // the zone database, for hosts without one
)

// ChatRequest is one message from the facilitator to the mentor, with the
// session so far.
type ChatRequest struct {
	Message   string
	LearnerID *string
	History   []Turn
	// TimeZone is the facilitator's: the day an opening's weekday hints
	// speak of is theirs. Nil is UTC.
	TimeZone *time.Location
}

// ChatReply is the mentor's answer to one message.
type ChatReply struct {
	Reply     string     `json:"reply"`
	ToolCalls []ToolCall `json:"tool_calls"`
	// Retrieval says which memory retrieval ran for this reply, and why.
	Retrieval Retrieval `json:"retrieval"`
	// PendingActions are the changes the model's tool calls proposed, for
	// the facilitator to confirm or cancel; none is applied yet.
	PendingActions []PendingAction `json:"pending_actions"`
	// WithoutMemory, when set, says why the reply was given without memory
	// (it could not be read); the reply is still the model's.
	WithoutMemory string `json:"without_memory,omitempty"`
}

// ChatListener hears of a reply while it is made, for a client that shows
// it as it comes: each piece of its text as the model writes it, and the
// name of each tool the model runs.
type ChatListener interface {
	ReplyText(piece string)
	ToolRuns(name string)
}

// ToolCall is a call the model made while answering.
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Capped, when set, says how the chat's bounds changed the call: not
	// run (too many at once, or the chat's tool results spent), or its
	// result shortened or too large to show.
	Capped string `json:"capped,omitempty"`
}

// ParseTimeZone reads the facilitator's IANA time zone ("Europe/Paris");
// empty is UTC. The zone database ships in the binary (time/tzdata), so a
// host without one reads zones all the same.
func ParseTimeZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return time.UTC, nil
	}
	// "Local" would be the server's zone, whatever the facilitator's.
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" || len(name) > maxTimeZoneName {
		return nil, Errorf(CodeInvalid, "time_zone must be an IANA time zone such as Europe/Paris")
	}
	return loc, nil
}

// maxTimeZoneName bounds a zone's name: the longest in the database has 32
// characters.
const maxTimeZoneName = 64
