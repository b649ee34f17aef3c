package summarizer

import (
	"slices"
	"strings"
	"unicode"
)

// countWords counts words the way the memory service does (strings.Fields),
// so that "at most SummaryMaxWords words" means the same thing on both sides.
func countWords(s string) int { return len(strings.Fields(s)) }

// truncateWords keeps the first max words of s. The ellipsis is glued to the
// last kept word so that marking the cut does not cost a word of budget.
func truncateWords(s string, max int) string {
	f := strings.Fields(s)
	if len(f) <= max {
		return strings.Join(f, " ")
	}
	if max <= 0 {
		return ""
	}
	return strings.Join(f[:max], " ") + "…"
}

// collapseSpace joins all whitespace runs, newlines included, into single
// spaces. Extracted text is rendered one point per line, so a newline left
// inside a point would break the parsing of the summary on the next update.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// tokens splits text into lower-case words: runs of letters and digits, with
// apostrophes kept inside words so contractions ("don't") stay one token and
// match the stopword list. Typographic apostrophes are folded to ASCII first
// because phones and word processors send them. Words are cut out of the
// text rather than built rune by rune: every post summarises, and building
// each word was a quarter of the offline summarizer's time.
func tokens(s string) []string {
	s = strings.ReplaceAll(s, "’", "'")
	var out []string
	start := -1 // byte offset of the word being read, or -1 between words
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || (r == '\'' && start >= 0) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = appendWord(out, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = appendWord(out, s[start:])
	}
	return out
}

// appendWord adds a word without its trailing apostrophes ("kids'"), in
// lower case; strings.ToLower returns a word already in lower case as it is.
func appendWord(out []string, w string) []string {
	if w = strings.TrimRight(w, "'"); w != "" {
		out = append(out, strings.ToLower(w))
	}
	return out
}

// stem folds the inflections that matter most for matching a word across
// turns (plurals and possessives: "tantrums" and "tantrum", "Maya's" and
// "Maya"). Anything heavier would mangle the words shown as topics.
func stem(w string) string {
	w = strings.TrimSuffix(w, "'s")
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 3 && strings.HasSuffix(w, "s") &&
		!strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

// isContent reports whether a token carries meaning of its own: not a
// stopword, not a bare number, and long enough not to be noise.
func isContent(w string) bool {
	if len(w) < 3 || stopwords[w] {
		return false
	}
	for _, r := range w {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// contentStems returns the distinct content stems of a text, in order.
func contentStems(s string) []string {
	var out []string
	for _, w := range tokens(s) {
		if st := stem(w); isContent(w) && !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	return out
}

// similar reports whether two sentences share most of their content words
// (Jaccard index of at least 0.8), that is, say nearly the same thing.
func similar(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	shared := 0
	for _, w := range a {
		if slices.Contains(b, w) {
			shared++
		}
	}
	return float64(shared) >= 0.8*float64(len(a)+len(b)-shared)
}

// setOf builds a lookup set; the lists below stay readable as plain text.
func setOf(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// stopwords are skipped when scoring sentences and picking topics. Besides
// the usual function words the list holds the fillers of chat ("thanks",
// "okay", "really") and the mentor's own name, which recur in every
// conversation and would otherwise outrank the real subject.
var stopwords = setOf(`
a about above after again against all almost also although always am an and
any anyone anything are aren't around as at away back be because been before
being below between both but by can can't cannot could couldn't day did didn't
do does doesn't doing don't done down during each either else enough even ever
every few for from further get gets getting got had hadn't has hasn't have
haven't having he he'd he'll he's her here here's hers herself him himself his
how how's however i i'd i'll i'm i've if in into is isn't it it'd it'll it's
its itself just keep kind know let let's like little lot lots made make makes
many maybe me might more most much must mustn't my myself need needs never new
no nor not now of off often oh ok okay on once one only or other others ought
our ours ourselves out over own perhaps please pretty quite rather really right
said same say says see seem seems she she'd she'll she's should shouldn't so
some something sometimes still such sure take than thank thanks that that's
the their theirs them themselves then there there's these they they'd they'll
they're they've thing things think this those though through time times to too
two under until up upon us very want wants was wasn't way we we'd we'll we're
we've well were weren't what what's when when's where where's whether which
while who who's whom why why's will with won't would wouldn't yeah yes yet you
you'd you'll you're you've your yours yourself yourselves hi hello hey great
good going go goes went bit able mr mrs ms dr mentor
`)
