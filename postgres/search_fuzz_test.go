package postgres

import (
	"html"
	"strings"
	"testing"
)

// FuzzHighlight checks that a snippet is safe to put in a page whatever the
// matched text holds: the only markup is the <mark> tags made from the
// delimiters, one per delimiter, and taking them out and unescaping gives
// back the text without the delimiters.
func FuzzHighlight(f *testing.F) {
	tags := strings.NewReplacer("<mark>", "", "</mark>", "")
	delimiters := strings.NewReplacer(markStart, "", markStop, "")
	f.Fuzz(func(t *testing.T, headline string) {
		snippet := highlight(headline)

		if got, want := strings.Count(snippet, "<mark>"), strings.Count(headline, markStart); got != want {
			t.Fatalf("%q: %d <mark> for %d start delimiters", snippet, got, want)
		}
		if got, want := strings.Count(snippet, "</mark>"), strings.Count(headline, markStop); got != want {
			t.Fatalf("%q: %d </mark> for %d stop delimiters", snippet, got, want)
		}
		if strings.Contains(snippet, markStart) || strings.Contains(snippet, markStop) {
			t.Fatalf("%q: a delimiter is left", snippet)
		}
		text := tags.Replace(snippet)
		if i := strings.IndexAny(text, `<>"'`); i >= 0 {
			t.Fatalf("%q: unescaped %q outside the tags", snippet, text[i:])
		}
		for rest := text; ; {
			i := strings.IndexByte(rest, '&')
			if i < 0 {
				break
			}
			rest = rest[i:]
			if !hasEntity(rest) {
				t.Fatalf("%q: a bare & at %q", snippet, rest)
			}
			rest = rest[1:]
		}
		if got, want := html.UnescapeString(text), delimiters.Replace(headline); got != want {
			t.Fatalf("highlight(%q) = %q, which reads %q; want %q", headline, snippet, got, want)
		}
	})
}

// hasEntity tells whether s starts with one of the entities
// html.EscapeString writes.
func hasEntity(s string) bool {
	for _, entity := range []string{"&amp;", "&lt;", "&gt;", "&#39;", "&#34;"} {
		if strings.HasPrefix(s, entity) {
			return true
		}
	}
	return false
}
