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
	// MemoriesUsed are the memories, conversations and sessions whose text
	// went into the reply's context, each once.
	MemoriesUsed []ContextSource `json:"memories_used"`
	// Personalization is how much of what the mentor knows went into the
	// reply: PersonalizationNone, Light or Deep.
	Personalization string `json:"personalization"`
	// ContextTokens is what the reply's context took of its token budget,
	// block by block, and what was left out to keep within it.
	ContextTokens ContextTokens `json:"context_tokens"`
	// Model is the model that wrote the reply.
	Model   string      `json:"model"`
	Timings ChatTimings `json:"timings"`
}

// Kinds of what went into a reply's context (ContextSource.Kind).
const (
	// ContextMemory is a learner memory, recalled or standing behind a line
	// of the learner's profile.
	ContextMemory = "memory"
	// ContextConversation is a conversation, by its rolling summary.
	ContextConversation = "conversation"
	// ContextSession is an ended session, by the opening prepared from it
	// or the digest of the last sessions.
	ContextSession = "session"
)

// ContextSource is one thing of memory that went into a reply's context
// (or was left out of it): its kind, its id, and the block of the context
// it went in by (a key of ContextTokens.Blocks).
type ContextSource struct {
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Block string `json:"block"`
}

// Personalization levels of a reply: none when nothing of memory went in;
// deep when retrieval went deep or the learner's profile or the session's
// opening went in; light otherwise.
const (
	PersonalizationNone  = "none"
	PersonalizationLight = "light"
	PersonalizationDeep  = "deep"
)

// ContextTokens is a reply's context as counted by package tokens.
type ContextTokens struct {
	// Budget is the most the context may take (COUNSELOR_CONTEXT_TOKENS);
	// Total is larger only when what always goes (the persona, the tools,
	// the pinned facts and the message) is.
	Budget int `json:"budget"`
	// Total is the sum of Blocks.
	Total int `json:"total"`
	// Blocks are the tokens of each block of the context, zero for a block
	// that is not in it.
	Blocks map[string]int `json:"blocks"`
	// EvictedExchanges are the session's oldest exchanges left out of the
	// context for the budget.
	EvictedExchanges int `json:"evicted_exchanges"`
	// BroughtBack are the evicted turns brought back because the message
	// refers back to them.
	BroughtBack int `json:"brought_back"`
	// LeftOut is what of memory did not fit the budget.
	LeftOut []ContextSource `json:"left_out"`
}

// ChatTimings are how long a reply took in recall (reading memory) and in
// the model (every call of its tool loop), in milliseconds.
type ChatTimings struct {
	RecallMS int64 `json:"recall_ms"`
	ModelMS  int64 `json:"model_ms"`
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
	// Found, on a search that ran, is how many conversations it found.
	Found *int `json:"found,omitempty"`
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
