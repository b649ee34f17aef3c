package mentor

import "regexp"

// How sure the mentor is of a memory. A memory the extractor found starts at
// ExtractedConfidence; learnt again, it rises to RepeatConfidence; a person
// adding, correcting or confirming it makes it PersonConfidence. Confidence
// falls by ConfidenceDecay for every ConfidenceDecayDays since it was last
// confirmed, computed when read (public.memory_confidence_now, which the
// postgres test TestConfidenceAgesAsTheMentorsConstantsSay holds to these
// constants), down to ConfidenceFloor, where a memory leaves recall. A memory a newer one
// contradicts drops to SupersededConfidence.
const (
	ExtractedConfidence  = 0.7
	RepeatConfidence     = 0.9
	PersonConfidence     = 1.0
	SupersededConfidence = 0.3
	ConfidenceDecay      = 0.1
	ConfidenceDecayDays  = 30
	ConfidenceFloor      = 0.3
	// MinExtractedImportance: a memory the extractor rates below it is
	// small talk, and is not stored.
	MinExtractedImportance = 0.4
)

// negation matches the words that turn a statement round: "not", "never",
// "no longer", "no more", "anymore", "used to", "stopped", and the n't of
// "doesn't", "isn't", "can't"...
var negation = regexp.MustCompile(`(?i)\b(not|never|no longer|no more|any ?more|used to|stopped|quit)\b|n't\b|n’t\b`)

// Contradicts says whether two statements that read alike say opposite
// things: one of them is turned round by a negation and the other is not
// ("Emma no longer struggles with long division" against "Emma struggles
// with long division"). It is asked only of memories close in words or
// meaning, which a repeat would otherwise merge.
func Contradicts(a, b string) bool {
	return negated(a) != negated(b)
}

// negated says whether a statement holds a negation. Any one counts, not
// their parity: "isn't afraid of fractions anymore" holds two, and still
// says the opposite of "is afraid of fractions".
func negated(statement string) bool {
	return negation.MatchString(statement)
}
