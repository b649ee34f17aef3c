package mentor

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"
)

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

// ConversationRecord is the active memory of one (facilitator, learner or
// none) conversation: the rolling summary, the last turns, and the number of
// turns in the segment not yet archived.
type ConversationRecord struct {
	ID           string    `json:"id"`
	LearnerID    *string   `json:"learner_id"`
	Summary      string    `json:"summary"`
	SummaryStale bool      `json:"summary_stale"`
	TurnCount    int       `json:"turn_count"`
	RecentTurns  TurnsJSON `json:"recent_turns"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	// SummarizedTurnID is the newest stored turn the summary covers; the
	// summarizer catches up from there. Clients are not shown it.
	SummarizedTurnID int64 `json:"-"`
}

// ArchivedConversation is one archived segment of a conversation, with a
// page of its turns in the order they were said. A segment is archived
// every MEMORY_ARCHIVE_TURNS turns, and a clear archives what was left, so
// one holds 50 turns as a rule; an imported one may hold many more, hence
// the pages.
type ArchivedConversation struct {
	ID        string  `json:"id"`
	LearnerID *string `json:"learner_id"`
	Summary   string  `json:"summary"`
	// TurnCount counts every turn of the segment, not only this page's.
	TurnCount  int       `json:"turn_count"`
	ArchivedAt time.Time `json:"archived_at"`
	Turns      TurnsJSON `json:"turns"`
	// NextOffset is the offset of the next page; nil after the last.
	NextOffset *int `json:"next_offset"`
}

// ArchiveQuery asks for a page of one archived conversation's turns.
type ArchiveQuery struct {
	ID     string
	Limit  int
	Offset int
}

// TurnsJSON is a JSON array of turns (a conversation's last turns, a search
// result's best matches) kept as the database hands it over: a read passes
// it on to the client as it is, instead of decoding every turn and encoding
// it again (decoding the last turns alone was a sixth of the CPU the GET
// benchmark cost the process). Turns decodes it when the turns themselves
// are needed.
type TurnsJSON json.RawMessage

// NewTurnsJSON encodes turns.
func NewTurnsJSON(turns []Turn) (TurnsJSON, error) {
	if turns == nil {
		turns = []Turn{}
	}
	raw, err := json.Marshal(turns)
	return TurnsJSON(raw), err
}

// Turns decodes the turns.
func (r TurnsJSON) Turns() ([]Turn, error) {
	var turns []Turn
	if len(r) == 0 {
		return turns, nil
	}
	return turns, json.Unmarshal(r, &turns)
}

// WithLatest returns the array with turns appended, cut to its last keep
// elements. The turns already there are carried over as they are, cut out
// of the array rather than decoded and encoded again: every post does this
// to its conversation's last turns, and decoding them cost more than the
// rest of the post's own Go work on the record.
func (r TurnsJSON) WithLatest(turns []Turn, keep int) (TurnsJSON, error) {
	elements, err := arrayElements(r)
	if err != nil {
		return nil, err
	}
	for _, t := range turns {
		raw, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		elements = append(elements, raw)
	}
	elements = elements[max(0, len(elements)-keep):]
	out := []byte{'['}
	for i, e := range elements {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e...)
	}
	return TurnsJSON(append(out, ']')), nil
}

// arrayElements cuts a JSON array into its elements, each as written. It
// reads only the array's structure (brackets, braces, strings and commas),
// so the array must be valid JSON, as a jsonb column's always is; an empty
// input is an empty array.
func arrayElements(raw []byte) ([][]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	if raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, errors.New("not a JSON array")
	}
	body := raw[1 : len(raw)-1]
	var elements [][]byte
	depth, start, inString, escaped := 0, 0, false, false
	for i, c := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == ',' && depth == 0:
			elements = append(elements, bytes.TrimSpace(body[start:i]))
			start = i + 1
		}
	}
	if last := bytes.TrimSpace(body[start:]); len(last) > 0 {
		elements = append(elements, last)
	}
	if depth != 0 || inString {
		return nil, errors.New("not a JSON array")
	}
	return elements, nil
}

// MarshalJSON writes the array as stored; encoding/json still checks it
// and takes out the spaces Postgres puts after commas and colons.
func (r TurnsJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("[]"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of the array, for clients of the API.
func (r *TurnsJSON) UnmarshalJSON(data []byte) error {
	*r = append((*r)[:0], data...)
	return nil
}

// Learner is a child or student a facilitator talks to the mentor about.
type Learner struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}
