package mentor

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The person in the chat is the facilitator, so their "Oh, I get it now!"
// is their own: a learner's breakthrough is only what the facilitator
// reports the learner said or did. These patterns read such a report.
var (
	// learnerPronoun is the learner as the subject of a report when not
	// named.
	learnerPronoun = regexp.MustCompile(`(?i)\b(he|she|they|(my|our) (son|daughter|kid|child|boy|girl|student))\b`)
	// reportedDeed is what follows the learner in a report: up to four
	// words ("finally", "all by herself"), then a saying or a deed of
	// getting it.
	reportedDeed = regexp.MustCompile(`(?i)^((?:[\s,]+[\p{L}'’]+){0,4}?)[\s,]+(` +
		`(?P<said>said|says|told (?:me|us)|tells (?:me|us)|shouted|yelled|exclaimed|announced|whispered|went)|` +
		`solved|solves|figured(?: \w+)? out|figures(?: \w+)? out|worked(?: \w+)? out|understood|understands|` +
		`gets it|got it|gets the (?:idea|point)|managed to|mastered|nailed|aced|passed|did it|` +
		`got (?:it|them|all|every|the|most|both|\d+)(?: \w+){0,2} right|explained)\b`)
	// wrongAfter undoes a deed that went the other way ("got it wrong").
	wrongAfter = regexp.MustCompile(`(?i)^\s+(wrong|backwards|mixed up)\b`)
	// understanding is a learner's words that tell of getting it.
	understanding = regexp.MustCompile(`(?i)(\boh!|\boh,? i (see|get it)|\bmakes? sense|\bgot it\b|\bi get it\b|\bi understand\b|` +
		`\bso that's why|\bthat was (actually )?(kind of )?fun|\bit worked\b|\bi did it\b|\bi can do (it|this)\b)`)
	// nearMiss before the deed undoes it as a negation does ("she almost
	// solved it", "she still hasn't solved it").
	nearMiss = regexp.MustCompile(`(?i)\b(almost|nearly)\b`)
)

// maxReportRunes bounds the part of a sentence read for a report: a report
// is a sentence, not a page, and a page read again at every mention of the
// learner in it would cost seconds of a post.
const maxReportRunes = 300

// LearnerBreakthrough returns the sentence of a facilitator's message that
// reports a breakthrough of the learner's, or "". The rule: the sentence's
// subject is the learner, by name (not "Emma's teacher") or as he, she,
// they or "my son" and the like, and within the next four words, none of
// them a negation, comes either a deed of getting it ("solved",
// "figured out", "got them all right", not "got it wrong") or a saying ("said", "told me")
// whose words tell of understanding ("I get it", "that makes sense").
// Without such a subject the words are the facilitator's own, and are
// never quoted as the learner's.
func LearnerBreakthrough(message, learnerName string) string {
	if !mayMatch(message, deedWords...) {
		return ""
	}
	return readBreakthrough(message, learnerName)
}

// deedWords holds a word of each deed and saying reportedDeed knows. Most
// messages hold none, and reading one for the learner's mentions and what
// follows them runs several patterns over each sentence (see mayMatch).
var deedWords = []string{"said", "says", "told", "tells", "shouted", "yelled", "exclaimed", "announced",
	"whispered", "went", "solve", "figure", "worked", "underst", "gets", "got", "managed", "mastered",
	"nailed", "aced", "passed", "did it", "explained"}

// readBreakthrough is LearnerBreakthrough without its first check.
func readBreakthrough(message, learnerName string) string {
	named := namePattern(learnerName)
	for _, sentence := range quotedSentences(message) {
		if r := []rune(sentence); len(r) > maxReportRunes {
			sentence = string(r[:maxReportRunes])
		}
		for _, at := range learnerMentions(sentence, named) {
			rest := sentence[at:]
			m := reportedDeed.FindStringSubmatchIndex(rest)
			if m == nil || negated(rest[m[2]:m[3]]) || nearMiss.MatchString(rest[m[2]:m[3]]) || wrongAfter.MatchString(rest[m[1]:]) {
				continue
			}
			said := reportedDeed.SubexpIndex("said")
			if m[2*said] >= 0 && !understanding.MatchString(rest[m[1]:]) {
				continue
			}
			return strings.Join(strings.Fields(sentence), " ")
		}
	}
	return ""
}

// namePattern finds the learner's name, whole or its first word; nil for
// no name.
func namePattern(learnerName string) *regexp.Regexp {
	names := strings.Fields(learnerName)
	if len(names) == 0 {
		return nil
	}
	pattern := regexp.QuoteMeta(strings.Join(names, " "))
	if len(names) > 1 {
		pattern += "|" + regexp.QuoteMeta(names[0])
	}
	return regexp.MustCompile(`(?i)\b(` + pattern + `)\b`)
}

// learnerMentions are the byte offsets in sentence just past each mention
// of the learner that can be a subject: the learner's name (named; a
// possessive is not the learner), or a pronoun.
func learnerMentions(sentence string, named *regexp.Regexp) []int {
	var ends []int
	if named != nil {
		for _, m := range named.FindAllStringIndex(sentence, -1) {
			if after := sentence[m[1]:]; !strings.HasPrefix(after, "'s") && !strings.HasPrefix(after, "’s") {
				ends = append(ends, m[1])
			}
		}
	}
	for _, m := range learnerPronoun.FindAllStringIndex(sentence, -1) {
		ends = append(ends, m[1])
	}
	return ends
}

// quotedSentences splits text into sentences at a full stop, question or
// exclamation mark followed by a space, and at line ends, but not inside
// double quotation marks: `Emma said "Oh! I get it." and smiled.` is one.
func quotedSentences(text string) []string {
	var out []string
	start, quoted := 0, false
	// By the width each rune has in text: an invalid byte is one byte wide,
	// though the rune it reads as is three.
	for offset, size := 0, 0; offset < len(text); offset += size {
		var r rune
		r, size = utf8.DecodeRuneInString(text[offset:])
		next, _ := utf8.DecodeRuneInString(text[offset+size:])
		end := -1
		switch {
		case r == '"':
			quoted = !quoted
		case r == '“':
			quoted = true
		case r == '”':
			quoted = false
		case r == '\n':
			quoted, end = false, offset
		case strings.ContainsRune(".!?", r) && !quoted && (offset+size == len(text) || unicode.IsSpace(next)):
			end = offset + size
		}
		if end >= 0 {
			if s := strings.TrimSpace(text[start:end]); s != "" {
				out = append(out, s)
			}
			start = offset + size
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}
