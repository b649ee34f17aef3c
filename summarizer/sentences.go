package summarizer

import (
	"regexp"
	"strings"
)

// listMarker matches the bullet or number that starts a list line. Mentor
// replies are often lists, and without this "1." would be split off as a
// sentence of its own.
var listMarker = regexp.MustCompile(`^\s*(?:[-*•+]|\d{1,2}[.)]|#{1,6})\s+`)

// abbreviations end with a period that does not end a sentence. "Mr." matters
// most: the mentor is called "Mr. Mentor".
var abbreviations = setOf(`mr mrs ms dr st vs etc e.g i.e approx`)

// splitSentences cuts a turn into sentences: at line breaks, and after ".",
// "!" or "?" followed by a space, unless the period closes an abbreviation
// or an initial. Markdown emphasis is dropped because it would otherwise be
// copied into the summary.
func splitSentences(text string) []string {
	var out []string
	text = strings.ReplaceAll(text, "**", "")
	text = strings.ReplaceAll(text, "__", "")
	for _, line := range strings.Split(text, "\n") {
		line = listMarker.ReplaceAllString(line, "")
		runes := []rune(line)
		start := 0
		for i := 0; i < len(runes); i++ {
			if !isTerminator(runes[i]) {
				continue
			}
			end := i + 1
			// Keep runs like "?!" or "..." and closing quotes with the
			// sentence they end.
			for end < len(runes) && (isTerminator(runes[end]) || strings.ContainsRune(`"')]”’`, runes[end])) {
				end++
			}
			if end < len(runes) && runes[end] != ' ' && runes[end] != '\t' {
				i = end - 1
				continue // "3.5", "e.g.," or a URL: not a sentence end
			}
			if runes[i] == '.' && end == i+1 && endsWithAbbreviation(runes[start:i]) {
				continue
			}
			out = appendSentence(out, string(runes[start:end]))
			start = end
			i = end - 1
		}
		out = appendSentence(out, string(runes[start:]))
	}
	return out
}

func isTerminator(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '…' }

// endsWithAbbreviation reports whether the text before a period ends with a
// known abbreviation or a single letter (an initial such as "J.").
func endsWithAbbreviation(before []rune) bool {
	f := strings.Fields(string(before))
	if len(f) == 0 {
		return false
	}
	last := strings.ToLower(strings.TrimLeft(f[len(f)-1], `("'`))
	return abbreviations[last] || len([]rune(last)) == 1
}

func appendSentence(out []string, s string) []string {
	if s = collapseSpace(s); s != "" {
		out = append(out, s)
	}
	return out
}
