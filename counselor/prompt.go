package counselor

import (
	"fmt"
	"strings"

	"mentormemory/memory"
)

const persona = `You are Mr. Mentor, a warm, practical mentor for parents and teachers
("facilitators") who support children's learning. Give concrete, kind, specific advice.
You can look up earlier conversations with this facilitator through your tools:
get_conversation_memory for the running summary, search_conversation_history to find
something discussed before. Use them when the facilitator refers to the past. Weave
what you remember in naturally; never recite dates or quote the record.`

// systemPrompt is the persona, the learner in focus and, on the first
// message of a session, the conversation memory.
func systemPrompt(req Request, conv *memory.ConversationUpdate) string {
	var b strings.Builder
	b.WriteString(persona)
	if req.LearnerID != nil {
		fmt.Fprintf(&b, "\n\nThis session is about one learner (learner_id %s).", *req.LearnerID)
	} else {
		b.WriteString("\n\nThis session is a general conversation (learner_id null).")
	}
	if len(req.History) == 0 && conv != nil && conv.Summary != "" {
		fmt.Fprintf(&b, "\n\n=== CONVERSATION MEMORY ===\nPrevious Summary (%d turns):\n%s\nLast Update: %s\n=== END CONVERSATION MEMORY ===",
			conv.TurnCount, conv.Summary, conv.UpdatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return b.String()
}
