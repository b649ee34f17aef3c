package mentor

// ChatRequest is one message from the facilitator to the mentor, with the
// session so far.
type ChatRequest struct {
	Message   string
	LearnerID *string
	History   []Turn
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

// ToolCall is a call the model made while answering.
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Capped, when set, says how the chat's bounds changed the call: not
	// run (too many at once, or the chat's tool results spent), or its
	// result shortened or too large to show.
	Capped string `json:"capped,omitempty"`
}
