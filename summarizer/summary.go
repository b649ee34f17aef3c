package summarizer

import (
	"slices"
	"strings"

	"mentormemory/mentor"
)

// The offline summary is plain text in labelled parts, one point per line,
// so that it reads well when shown to the mentor model and the facilitator
// and so that the next incremental update can parse it back and merge.
const (
	labelLearner = "Learner:"
	labelTopics  = "Topics:"
	labelTone    = "Tone:"
	toneNeutral  = "neutral"
	bullet       = "- "
)

// section is one bulleted part of the summary.
type section int

const (
	secEarlier section = iota // free text of a previous summary not written by Offline
	secContext                // what the facilitator told about the learner
	secConcerns
	secAdvice
	secActions
	numSections
)

var sectionLabels = [numSections]string{
	secEarlier:  "Earlier notes:",
	secContext:  "Context shared:",
	secConcerns: "Concerns raised:",
	secAdvice:   "Advice given:",
	secActions:  "Action items:",
}

// Caps that keep the summary compact even when the word budget would allow
// more; the rolling summary is context for the mentor, not a transcript.
const (
	maxTopics      = 8
	maxTones       = 3
	maxPoints      = 5  // per section, after a merge
	maxPointWords  = 35 // a pasted essay must not fill the budget alone
	maxLearnerWord = 8
	maxItemWords   = 4 // per topic or tone
)

// point is one extracted sentence. old marks points carried over from the
// previous summary: when the budget is tight they are dropped first.
type point struct {
	text string
	old  bool
}

type summary struct {
	learner  string
	topics   []string
	sections [numSections][]point
	tones    []string
}

// render writes the summary. The learner line is always present so that a
// summary of turns that yielded no sentence is still non-empty.
func (s *summary) render() string {
	var b strings.Builder
	b.WriteString(labelLearner + " " + s.learner + "\n")
	if len(s.topics) > 0 {
		b.WriteString(labelTopics + " " + strings.Join(s.topics, ", ") + "\n")
	}
	for sec := section(0); sec < numSections; sec++ {
		if len(s.sections[sec]) == 0 {
			continue
		}
		b.WriteString(sectionLabels[sec] + "\n")
		for _, p := range s.sections[sec] {
			b.WriteString(bullet + p.text + "\n")
		}
	}
	tone := toneNeutral
	if len(s.tones) > 0 {
		tone = strings.Join(s.tones, ", ")
	}
	b.WriteString(labelTone + " " + tone)
	return b.String()
}

// learnerLine describes whom the conversation is about; the learner's name
// comes from the request, never from the previous summary, so a renamed
// learner is shown correctly.
func learnerLine(name string) string {
	if name = collapseSpace(name); name == "" {
		return "none (general conversation)"
	}
	return truncateWords(name, maxLearnerWord)
}

// parseSummary reads a previous summary back into its parts. Lines it does
// not recognise (a summary written by the model, or edited by hand) are kept
// as "Earlier notes" sentences rather than lost.
func parseSummary(text string) summary {
	var s summary
	cur := secEarlier
	inSection := false
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, labelLearner):
			inSection = false
		case strings.HasPrefix(line, labelTopics):
			s.topics = appendUnique(s.topics, splitList(strings.TrimPrefix(line, labelTopics))...)
			inSection = false
		case strings.HasPrefix(line, labelTone):
			for _, t := range splitList(strings.TrimPrefix(line, labelTone)) {
				if t != toneNeutral {
					s.tones = appendUnique(s.tones, t)
				}
			}
			inSection = false
		case sectionOf(line) >= 0:
			cur, inSection = sectionOf(line), true
		case inSection && strings.HasPrefix(line, bullet):
			s.sections[cur] = append(s.sections[cur], point{text: truncateWords(line[len(bullet):], maxPointWords), old: true})
		default:
			for _, sent := range splitSentences(strings.TrimPrefix(line, bullet)) {
				s.sections[secEarlier] = append(s.sections[secEarlier], point{text: truncateWords(sent, maxPointWords), old: true})
			}
		}
	}
	return s
}

func sectionOf(line string) section {
	for sec, label := range sectionLabels {
		if line == label {
			return section(sec)
		}
	}
	return -1
}

// splitList reads a "Topics:" or "Tone:" value back. Items are cut to a few
// words: a hand-edited or model-written line could hold a whole paragraph,
// and these lines are never trimmed by fit.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.Trim(truncateWords(item, maxItemWords), " ."); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// appendUnique appends the items not yet in list, in order.
func appendUnique(list []string, items ...string) []string {
	for _, it := range items {
		if !containsFold(list, it) {
			list = append(list, it)
		}
	}
	return list
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// merge folds the parts extracted from new turns into the previous summary.
// Points keep their age order (previous first, then new), and every list is
// capped by dropping from the front, so the oldest points go first.
func merge(prev, cur summary) summary {
	out := summary{learner: cur.learner}

	// A topic that comes up again is moved to the end, so it counts as
	// recent and survives the cap.
	for _, t := range prev.topics {
		if !containsFold(cur.topics, t) {
			out.topics = append(out.topics, t)
		}
	}
	out.topics = keepLast(append(out.topics, cur.topics...), maxTopics)

	// A new point that restates an old one replaces it: the newer wording
	// is the current state of things.
	for sec := section(0); sec < numSections; sec++ {
		var pts []point
		var stems [][]string
		for _, p := range append(append([]point(nil), prev.sections[sec]...), cur.sections[sec]...) {
			st := contentStems(p.text)
			if i := slices.IndexFunc(stems, func(o []string) bool { return similar(o, st) }); i >= 0 {
				pts, stems = slices.Delete(pts, i, i+1), slices.Delete(stems, i, i+1)
			}
			pts, stems = append(pts, p), append(stems, st)
		}
		out.sections[sec] = keepLast(pts, maxPoints)
	}

	// The tone of the new turns leads; the earlier tone is kept after it
	// because a worried parent who is now relieved is still worth knowing.
	out.tones = appendUnique(append([]string(nil), cur.tones...), prev.tones...)
	if len(out.tones) > maxTones {
		out.tones = out.tones[:maxTones]
	}
	return out
}

func keepLast[T any](list []T, n int) []T {
	if len(list) > n {
		return list[len(list)-n:]
	}
	return list
}

// fit drops points until the rendered summary is within the word budget.
// Old points go before new ones; among them the section holding the most
// points gives up its oldest, so no part of the summary is wiped out while
// another is still long.
func (s *summary) fit(budget int) string {
	for {
		text := s.render()
		if countWords(text) <= budget {
			return text
		}
		sec, ok := s.sectionToTrim()
		if !ok {
			// Only the fixed lines are left; they are short by
			// construction, but the budget is a hard promise.
			return truncateWords(text, budget)
		}
		s.sections[sec] = s.sections[sec][1:]
	}
}

func (s *summary) sectionToTrim() (section, bool) {
	best, bestOld, bestLen := section(-1), false, 0
	for sec := section(0); sec < numSections; sec++ {
		pts := s.sections[sec]
		if len(pts) == 0 {
			continue
		}
		old := pts[0].old
		if best < 0 || (old && !bestOld) || (old == bestOld && len(pts) > bestLen) {
			best, bestOld, bestLen = sec, old, len(pts)
		}
	}
	return best, best >= 0
}

// wordBudget is the hard limit every offline summary is fitted to.
const wordBudget = mentor.SummaryMaxWords
