package mentor

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// FuzzClosingReadsAsItsPatterns checks the shortcuts of reading a turn for
// the closing state against the patterns they stand for: words is what the
// regular expression of words finds, delighted answers what the delight
// pattern does on the trimmed text, and a breakthrough is the one reading
// the message in full finds, whatever the text holds (upper case, a Kelvin
// sign or a long s, which (?i) folds to k and s).
func FuzzClosingReadsAsItsPatterns(f *testing.F) {
	wordPattern := regexp.MustCompile(`[\p{L}\p{N}']+`)
	for _, seed := range []string{"Oh! I see.", "That MAKES SENSE", "it wor\u212Aed", "makes \u017Fense", "That was kind of fun", "So THAT's why", "I did it.", "it worked", "Got it", "helps actually", "I get it", "Emma finally SOLVED it.", "She wor\u212Aed it out!", "Emma \u017Faid \"I get it\"", "My son aced the test.",
		"Emma got them all right", "she understood", "He nailed it", "They managed to finish", "Emma explained fractions to me.",
		"no luck today", "  done!  ", "it's 3 o'clock, café", "\xff bad \xfe bytes"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		want := wordPattern.FindAllString(text, -1)
		if got := words(text); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("words(%q) = %q, the pattern finds %q", text, got, want)
		}
		if got, want := delighted(text), delight.MatchString(strings.TrimSpace(text)); got != want {
			t.Fatalf("delighted(%q) = %v, the pattern says %v", text, got, want)
		}
		if got, want := LearnerBreakthrough(text, "Emma"), readBreakthrough(text, "Emma"); got != want {
			t.Fatalf("LearnerBreakthrough(%q) = %q, reading it in full finds %q", text, got, want)
		}
	})
}
