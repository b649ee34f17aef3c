package llm

import (
	"fmt"
	"regexp"
	"strings"

	"mentormemory/mentor"
)

// Fence keeps the data of a prompt apart from its instructions. Each piece
// of data (turns, summaries, memories) stands inside one of the fence's tags,
// and the model is told that everything inside them is material to work on,
// never to obey; the data was written by people, or by a model echoing them,
// and may hold text that reads like instructions.
type Fence struct {
	// tagLike matches anything in the data that could pass for one of the
	// tags, in any case and spacing, such as "</turn>" or "< Memory".
	tagLike *regexp.Regexp
}

// NewFence returns the fence made of tags.
func NewFence(tags ...string) Fence {
	return Fence{tagLike: regexp.MustCompile(`(?i)<(\s*/?\s*(?:` + strings.Join(tags, "|") + `)\b)`)}
}

// Defuse keeps data from closing its fence: the "<" of a tag-like sequence
// becomes "‹", which reads the same to a person and to the model but is not
// the delimiter. Everything else passes verbatim, so "x < 5" in a maths
// question survives.
func (f Fence) Defuse(s string) string { return f.tagLike.ReplaceAllString(s, "‹$1") }

// Turns writes each turn, oldest first, defused inside its own tag. The
// speaker is named by their part in the conversation, person for the human
// side and "mentor" for the model, rather than by the API's "user" and
// "assistant", which the model could confuse with its own chat roles.
func (f Fence) Turns(tag, person string, turns []mentor.Turn) string {
	var b strings.Builder
	for _, t := range turns {
		speaker := person
		if t.Role == mentor.RoleAssistant {
			speaker = "mentor"
		}
		fmt.Fprintf(&b, "<%s speaker=%q>\n%s\n</%s>\n", tag, speaker, f.Defuse(strings.TrimSpace(t.Content)), tag)
	}
	return b.String()
}

// WriteBlock writes body inside tag, each on lines of its own.
func WriteBlock(b *strings.Builder, tag, body string) {
	fmt.Fprintf(b, "<%s>\n%s\n</%s>\n", tag, strings.TrimRight(body, "\n"), tag)
}

// QuotedName is a learner's name as prompts show it: one line, at most max
// characters, without quotes, angle brackets or backticks, so the name, which
// is data, cannot close a quotation or a tag and carry instructions of its
// own. It returns "" for an empty name.
func QuotedName(name string, max int) string {
	name = strings.Map(func(r rune) rune {
		if strings.ContainsRune("\"<>`", r) {
			return -1
		}
		return r
	}, strings.Join(strings.Fields(name), " "))
	if name == "" {
		return ""
	}
	if r := []rune(name); len(r) > max {
		name = string(r[:max])
	}
	return fmt.Sprintf("%q", name)
}
