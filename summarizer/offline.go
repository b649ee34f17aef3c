package summarizer

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"mentormemory/mentor"
)

// Offline is the built-in summarizer used when no model key is configured:
// deterministic, extractive, no network. It holds no state, so one value can
// serve concurrent requests.
type Offline struct{}

// NewOffline returns the offline summarizer.
func NewOffline() *Offline { return &Offline{} }

var _ mentor.Summarizer = (*Offline)(nil)

// Name implements mentor.Summarizer.
func (*Offline) Name() string { return "offline" }

// Summarize implements mentor.Summarizer. It never fails: the work is a few
// passes over text already in memory, so the context is not consulted
// either; there is nothing to cancel.
func (*Offline) Summarize(_ context.Context, req mentor.SummaryRequest) (string, error) {
	prev := strings.TrimSpace(req.Previous)
	if len(req.Turns) == 0 {
		if countWords(prev) <= wordBudget {
			return prev, nil // nothing new to fold in; "" stays ""
		}
		// Merging with nothing applies the caps of a normal update.
		s := merge(parseSummary(prev), summary{learner: learnerLine(req.LearnerName)})
		return s.fit(wordBudget), nil
	}
	cur := extract(req.Turns, req.LearnerName, prev)
	if prev == "" {
		return cur.fit(wordBudget), nil
	}
	merged := merge(parseSummary(prev), cur)
	return merged.fit(wordBudget), nil
}

// How many points extraction keeps per section; merge caps the result again.
var extractCaps = [numSections]int{secContext: 3, secConcerns: 4, secAdvice: 4, secActions: 4}

// How many topics extraction names: a full summary names the whole
// conversation; the few turns of an update should not push out every topic
// of the previous summary.
const (
	fullTopics        = 6
	incrementalTopics = 3
)

// sentence is one candidate point.
type sentence struct {
	text  string
	stems []string
	order int
	sec   section
	score float64
}

// extract picks the most informative sentences of the turns and sorts them
// into the parts of the summary.
func extract(turns []mentor.Turn, learnerName, prev string) summary {
	c := newCorpus(learnerName)
	type raw struct {
		text  string
		user  bool
		words []string // all tokens
		stems []string // distinct content stems
	}
	var raws []raw
	for _, t := range turns {
		user := t.Role != mentor.RoleAssistant
		for _, text := range splitSentences(t.Content) {
			words := tokens(text)
			stems := c.addSentence(words)
			// Greetings and one-word replies say nothing worth keeping.
			if len(words) >= 3 && len(stems) > 0 {
				raws = append(raws, raw{text: text, user: user, words: words, stems: stems})
			}
		}
		c.endTurn()
	}
	nTopics := fullTopics
	if prev != "" {
		c.addPrevious(prev)
		nTopics = incrementalTopics
	}

	var cands []sentence
	for i, r := range raws {
		sec, affinity := classify(r.user, r.words, strings.HasSuffix(r.text, "?"))
		if affinity <= 0 {
			continue
		}
		cands = append(cands, sentence{
			text:  truncateWords(r.text, maxPointWords),
			stems: r.stems,
			order: i,
			sec:   sec,
			score: c.informativeness(r.stems) * affinity,
		})
	}

	s := summary{learner: learnerLine(learnerName)}
	for sec := section(0); sec < numSections; sec++ {
		s.sections[sec] = pick(cands, sec, extractCaps[sec])
	}
	s.topics = c.topics(nTopics)
	s.tones = tones(turns)
	return s
}

// classify decides which part of the summary a sentence belongs to and how
// well it fits there. Concerns and context come only from the facilitator
// and advice only from the mentor: the mentor echoing "that must be
// frustrating" is empathy, not a concern, and a parent relaying a tip is
// context. Action items may come from either side.
func classify(user bool, words []string, question bool) (section, float64) {
	var concern, advice, action int
	for _, w := range words {
		switch {
		case concernCues[w]:
			concern++
		case actionCues[w]:
			action++
		case adviceCues[w]:
			advice++
		}
	}
	var aff [numSections]float64
	if user {
		if question {
			concern++ // "How do I get her to...?" is a concern put as a question
		}
		if concern > 0 {
			aff[secConcerns] = float64(1 + 2*concern)
		} else {
			aff[secContext] = 1
		}
	} else {
		aff[secAdvice] = float64(1 + advice)
		if advice == 0 && action == 0 {
			aff[secAdvice] = 0.5 // an insight rather than advice: still worth keeping
		}
		if question {
			aff[secAdvice] *= 0.7 // the mentor asking back is mostly not advice
		}
	}
	if action > 0 {
		aff[secActions] = float64(1 + action)
	}
	best := section(0)
	for sec := section(1); sec < numSections; sec++ {
		if aff[sec] > aff[best] {
			best = sec
		}
	}
	return best, aff[best]
}

// pick returns the n best sentences of a section, in conversation order.
// A sentence that says nearly the same as a better one already picked is
// skipped: a facilitator repeating a worry should not fill the section.
func pick(cands []sentence, sec section, n int) []point {
	var in []sentence
	for _, s := range cands {
		if s.sec == sec {
			in = append(in, s)
		}
	}
	slices.SortStableFunc(in, func(a, b sentence) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	var chosen []sentence
	for _, s := range in {
		if len(chosen) == n {
			break
		}
		if !slices.ContainsFunc(chosen, func(c sentence) bool { return similar(c.stems, s.stems) }) {
			chosen = append(chosen, s)
		}
	}
	slices.SortFunc(chosen, func(a, b sentence) int { return cmp.Compare(a.order, b.order) })
	pts := make([]point, 0, len(chosen))
	for _, s := range chosen {
		pts = append(pts, point{text: s.text})
	}
	return pts
}

// tones reads the facilitator's feelings from the lexicon, most frequent
// first. Only facilitator turns count: the mentor's empathy ("it's natural
// to feel worried") and pleasantries ("happy to help") would otherwise
// colour every conversation.
func tones(turns []mentor.Turn) []string {
	count := map[string]int{}
	var order []string // labels by first appearance
	for _, t := range turns {
		if t.Role == mentor.RoleAssistant {
			continue
		}
		words := tokens(t.Content)
		for i, w := range words {
			label := feelings[w]
			if label == "" || negated(words, i) {
				continue
			}
			if count[label] == 0 {
				order = append(order, label)
			}
			count[label]++
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(count[b], count[a]) })
	return order[:min(maxTones, len(order))]
}

// negated reports whether one of the two words before words[i] negates it,
// as in "not worried" or "never really anxious".
func negated(words []string, i int) bool {
	for j := max(0, i-2); j < i; j++ {
		if negators[words[j]] {
			return true
		}
	}
	return false
}
