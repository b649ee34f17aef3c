package mentor

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// A question that asks when something happened ("When did Max break his
// wrist?", "How long ago did we lose Noodle?") is answered by a turn that
// says when: "Max broke his wrist last week". The conversation holding
// that turn shares the question's words with every other one that
// mentions the wrist, the cast or the scar without saying when, so its
// words alone rank it among them, not above them. For such a question,
// search therefore reads whether the best-matching turn of each of the
// best results names a time, and prefers the results whose turn does, as
// a boost, never a filter: a conversation that matches the words much
// better still wins. A conversation-wide mark would not do: nine
// conversations in ten say "yesterday" or "this morning" somewhere.
//
// The turns are read from what the search returns anyway (each result's
// best-matching turns, Matches), so the preference costs no statement and
// nothing per conversation searched: a few regular expressions over at
// most whenDepth turns, and only for the few questions that ask when. The
// one cost is in the results below the limit it reads: twice the limit,
// at most whenDepth, so none at the default limit of 20 and five more at
// the mentor's tool's five.
const (
	// whenBoost is the share of the best score that a result whose best
	// turn names a time gains: enough to pass the conversations that match
	// the words about as well, not one that matches them much better
	// (the README gives the measurements).
	whenBoost = 0.3
	// whenDepth is the most results a when question reads the turns of
	// before it is cut to the limit asked for (it reads twice the limit):
	// a conversation ranked just below the limit by its words can still
	// rise into it. Each result read costs its best turns and its snippet.
	whenDepth = 20
)

// whenWords finds a question about when something happened: "when did",
// "when was", "how long ago", "how long has … been", "since when", "what
// year did", "which month". A "when" that opens a clause ("what do I do
// when Emma cries") is not followed by a past-tense auxiliary, and "when
// is" or "when does" more often asks about a routine or a plan ("when does
// Emma take her library books back") than about a time gone by.
var whenWords = regexp.MustCompile(`\b(?:when\s+(?:did|was|were|had|has|have)|` +
	`how\s+long\s+(?:ago|has|have|had|did|was|were)|since\s+when|` +
	`(?:what|which)\s+(?:year|month|date|day)\s+(?:did|was|were))\b`)

// recalledConversation finds a question about when something was said
// ("when did we talk about the recital", "when did I tell you about
// Emma's glasses"): its answer is the time of the conversation, which
// every result carries, not a time a turn states.
var recalledConversation = regexp.MustCompile(`\b(?:i|we|you)\s+(?:first\s+|last\s+|ever\s+)?` +
	`(?:talk|talked|discuss|discussed|mention|mentioned|tell|told|say|said|bring|brought|ask|asked|` +
	`chat|chatted|speak|spoke|go\s+over|went\s+over)\b`)

// AsksWhen reports whether a search question asks when something happened,
// so that the conversations whose matching turn says when are preferred.
func AsksWhen(question string) bool {
	lower := strings.ToLower(question)
	// Every search asks this first: most questions hold none of the words
	// whenWords needs, which a substring search tells in nanoseconds and
	// the expression in microseconds.
	if !containsAny(lower, "when", "long", "year", "month", "date", "day") {
		return false
	}
	return whenWords.MatchString(lower) && !recalledConversation.MatchString(lower)
}

// containsAny reports whether s holds any of subs.
func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// mayMatch reports whether text may match a case-insensitive pattern every
// match of which holds one of words (in lower case), so that the pattern,
// microseconds a text, runs only where a substring search, nanoseconds,
// finds one. Lower casing folds what the pattern's (?i) does but a long s,
// which (?i) matches as an s: a text holding one is left to the pattern.
func mayMatch(text string, words ...string) bool {
	lower := strings.ToLower(text)
	return containsAny(lower, words...) || strings.ContainsRune(lower, 'ſ')
}

// StatesTime reports whether text, said at said, names a time the way
// ReadTimeReference reads one in a question: "last week", "yesterday",
// "two years ago", "in March", "on 4 May", "since 2021". A weekday alone
// ("lessons are on Friday") is a routine, not a time.
func StatesTime(text string, said time.Time) bool {
	_, ok := firstTimeNamed(text, said)
	return ok
}

// preferStatedTimes reorders the results of a when question: each one
// whose best-matching turn names a time gains whenBoost times the best
// score. The results come best first; equal scores keep their order
// (newest first). It returns at most limit results.
func preferStatedTimes(results []SearchResult, limit int, now time.Time) []SearchResult {
	if len(results) == 0 {
		return results
	}
	boost := whenBoost * results[0].Rank
	for i := range results {
		turns, err := results[i].Matches.Turns()
		if err != nil || len(turns) == 0 {
			continue
		}
		said := turns[0].CreatedAt
		if said.IsZero() {
			said = now
		}
		if StatesTime(turns[0].Content, said) {
			results[i].Rank = math.Round((results[i].Rank+boost)*1e4) / 1e4
		}
	}
	slices.SortStableFunc(results, func(a, b SearchResult) int { return cmp.Compare(b.Rank, a.Rank) })
	return results[:min(limit, len(results))]
}
