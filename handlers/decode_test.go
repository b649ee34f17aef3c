package handlers

import (
	"testing"
	"unicode/utf8"
)

// A body is read in pieces that may cut a character in two; the check of
// the pieces must agree with utf8.Valid on the whole, wherever the cuts
// fall.
func TestUTF8StreamAgreesWithValidWhereverTheTextIsCut(t *testing.T) {
	texts := []string{
		"", "plain", "Zoë ✓ 🦕", "🦕🦕", "é",
		"a\xffb", "\xff", "\xe2\x82", "ok\xe2\x82", "\xe2\x82\xac\x80", "\xc0\xaf",
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x9f\xa6", "\xf0\x9f\xa6\x95\xf0", "\x80\x80\x80", "\xe2A\x82",
	}
	for _, text := range texts {
		want := utf8.ValidString(text)
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				var u utf8Stream
				u.write([]byte(text[:i]))
				u.write([]byte(text[i:j]))
				u.write([]byte(text[j:]))
				u.end()
				if u.valid() != want {
					t.Fatalf("%q cut at %d and %d: valid %v, want %v", text, i, j, u.valid(), want)
				}
			}
		}
	}
}
