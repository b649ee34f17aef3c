package counselor

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// Bounds of one chat. The model decides how many tools it calls, and a
// search result can carry hundreds of kilobytes of turns, so without them
// one message could run hundreds of searches and send the model a request
// of a hundred megabytes.
const (
	// DefaultMaxToolRounds bounds how many rounds of tool calls one reply
	// may take, so a model that never stops calling tools cannot hold a
	// request.
	DefaultMaxToolRounds = 4
	// MaxToolCallsPerRound is how many of one reply's tool calls are run;
	// the others are answered with an error asking for fewer at once.
	MaxToolCallsPerRound = 8
	// MaxToolResultBytes bounds one tool result as the model reads it: a
	// larger one has its texts cut short.
	MaxToolResultBytes = 16 << 10
	// MaxToolResultsBytes bounds all the tool results of one chat. Once
	// they are spent, further calls are answered with an error telling the
	// model to answer from what it has.
	MaxToolResultsBytes = 64 << 10
	// DefaultDeadline bounds a whole chat: the recall, every model call and
	// every tool. It is well under the HTTP server's write timeout
	// (config.WriteTimeout), so the client hears the 502 rather than a
	// dropped connection.
	DefaultDeadline = 60 * time.Second
)

// minToolResultBytes is the least budget worth running a tool for: a
// shortened result is rarely smaller.
const minToolResultBytes = 1 << 10

// What a chat's reply says of a tool call that its bounds changed
// (mentor.ToolCall.Capped).
const (
	cappedTooMany   = "not run: too many calls at once"
	cappedBudget    = "not run: the chat's tool results were spent"
	cappedShortened = "result shortened"
	cappedTooLarge  = "result too large"
)

// toolErrorResult is what the model reads for a call that failed or was
// not run, in the shape of a failed tool call.
func toolErrorResult(message string) string {
	// A bool and a string always encode.
	encoded, _ := json.Marshal(map[string]any{"success": false, "error": message})
	return string(encoded)
}

// fitJSON encodes v in at most limit bytes. When v's JSON is longer, every
// text in it is cut shorter and shorter until it fits, so the model still
// reads valid JSON with every item and the start of each text; shortened
// says so. It returns nil when even the shortest cut is too long.
func fitJSON(v any, limit int) (encoded []byte, shortened bool, err error) {
	encoded, err = json.Marshal(v)
	if err != nil || len(encoded) <= limit {
		return encoded, false, err
	}
	// Decoded generically, the result can be shortened whatever its type;
	// numbers stay as they were written.
	decoder := json.NewDecoder(bytes.NewReader(encoded))
	decoder.UseNumber()
	var tree any
	if err := decoder.Decode(&tree); err != nil {
		return nil, false, err
	}
	if object, ok := tree.(map[string]any); ok {
		object["shortened"] = "long texts were cut; ask more narrowly for the rest"
	}
	for keep := 2000; keep >= 60; keep /= 2 {
		if encoded, err = json.Marshal(shortenTexts(tree, keep)); err != nil || len(encoded) <= limit {
			return encoded, true, err
		}
	}
	return nil, true, nil
}

// shortenTexts returns v with every string longer than keep characters cut
// to keep, ending in "…".
func shortenTexts(v any, keep int) any {
	switch v := v.(type) {
	case string:
		if utf8.RuneCountInString(v) > keep {
			return string([]rune(v)[:keep]) + "…"
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = shortenTexts(item, keep)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, item := range v {
			out[key] = shortenTexts(item, keep)
		}
		return out
	default:
		return v
	}
}

// toolBudget is what is left of a chat's MaxToolResultsBytes.
type toolBudget int

// fit encodes a tool's result within one result's bound and what is left
// of the budget, and takes its size from the budget. It says what was
// capped, if anything.
func (b *toolBudget) fit(result any) (string, string) {
	encoded, shortened, err := fitJSON(result, min(MaxToolResultBytes, int(*b)))
	switch {
	case err != nil:
		return toolErrorResult("Tool result could not be encoded"), ""
	case encoded == nil:
		return toolErrorResult("The result is too large to show here; ask for something narrower, or answer from what you have"), cappedTooLarge
	}
	*b -= toolBudget(len(encoded))
	if shortened {
		return string(encoded), cappedShortened
	}
	return string(encoded), ""
}
