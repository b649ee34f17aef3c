package mentor

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Bounds of the session digest: what the last few sessions add up to,
// short enough to go into every session's first message beside the profile.
const (
	DigestSessions    = 5
	DigestTokenBudget = 400
	// digestStruggles and digestNext bound the open struggles and next steps
	// it names; the profile holds the rest.
	digestStruggles = 3
	digestNext      = 3
	// sessionSummaryMax bounds one session's stored summary, in characters.
	sessionSummaryMax = 1200
	// digestSessionLineMax bounds a session's line in the digest.
	digestSessionLineMax = 320
	// sameThingSaid is how alike two statements of what is next are when
	// they say the same thing in other words.
	sameThingSaid = 0.5
)

// EndedSession is a session that has ended, as the digest reads it.
type EndedSession struct {
	ID        string
	StartedAt time.Time
	EndedAt   time.Time
	Closing   ClosingState
	// Summary is what SummarizeSession said when it ended.
	Summary string
}

// SummarizeSession is one session's own summary, stored when it ends: when
// and how long, how it felt, what clicked, what was learnt and what was left
// for next time. It is written from the closing state kept during the
// session, so ending needs no model call.
func SummarizeSession(closing ClosingState, startedAt, endedAt time.Time) string {
	parts := []string{sessionWhen(closing, startedAt, endedAt)}
	if len(closing.EmotionalArc) > 0 {
		parts = append(parts, "Feelings: "+strings.Join(closing.EmotionalArc, " → ")+".")
	}
	if n := len(closing.KeyMoments); n > 0 {
		parts = append(parts, "Breakthrough: "+asSentence(closing.KeyMoments[n-1]))
	}
	if len(closing.NewMemories) > 0 {
		parts = append(parts, "Learnt: "+joinSentences(closing.NewMemories))
	}
	if len(closing.NextSessionHooks) > 0 {
		parts = append(parts, "Left for next time: "+joinSentences(closing.NextSessionHooks))
	}
	return truncate(strings.Join(parts, " "), sessionSummaryMax-1)
}

// sessionWhen is the first sentence of a session's summary: its day, its
// exchanges and its length. The day is UTC's: a session ends without the
// facilitator's time zone (the worker ends most, when they are idle).
func sessionWhen(closing ClosingState, startedAt, endedAt time.Time) string {
	exchanges := "1 exchange"
	if closing.Exchanges != 1 {
		exchanges = fmt.Sprintf("%d exchanges", closing.Exchanges)
	}
	return fmt.Sprintf("%s, %s over %s.", endedAt.UTC().Format("Monday 2 January"), exchanges, sessionLength(startedAt, endedAt))
}

func sessionLength(start, end time.Time) string {
	minutes := int(end.Sub(start).Round(time.Minute).Minutes())
	switch {
	case minutes < 1:
		return "under a minute"
	case minutes == 1:
		return "1 minute"
	case minutes < 120:
		return fmt.Sprintf("%d minutes", minutes)
	}
	return fmt.Sprintf("%d hours", minutes/60)
}

// joinSentences joins short statements into one sentence list.
func joinSentences(items []string) string {
	trimmed := make([]string, len(items))
	for i, s := range items {
		trimmed[i] = strings.TrimRight(strings.TrimSpace(s), ".")
	}
	return strings.Join(trimmed, "; ") + "."
}

// SessionDigest is what the last few sessions with a learner add up to:
// what keeps coming back, where things stand, and a line per session.
// Consolidation keeps it, within DigestTokenBudget.
type SessionDigest struct {
	// Sessions are the ids of the sessions it covers, latest first.
	Sessions []string `json:"sessions"`
	// Themes are what recurs across them: feelings, topics, breakthroughs.
	Themes []string `json:"themes"`
	// Standing is where things stand now: the last session, open
	// struggles, what is next.
	Standing []string `json:"standing"`
	// Recent is a line per session, latest first.
	Recent []string `json:"recent"`
	Tokens int      `json:"tokens"`
}

// NoDigest is the digest of no session yet.
func NoDigest() SessionDigest {
	return SessionDigest{Sessions: []string{}, Themes: []string{}, Standing: []string{}, Recent: []string{}}
}

// BuildDigest digests the last sessions (latest first, at most
// DigestSessions are read) with the learner's current memories, within
// budget tokens of its Markdown. Over budget, the oldest sessions' lines go
// first, then the themes' last; where things stand is kept.
func BuildDigest(sessions []EndedSession, current []LearnerMemory, budget int, count TokenCounter, now time.Time) SessionDigest {
	sessions = sessions[:min(len(sessions), DigestSessions)]
	d := NoDigest()
	if len(sessions) == 0 {
		return d
	}
	for _, s := range sessions {
		d.Sessions = append(d.Sessions, s.ID)
		d.Recent = append(d.Recent, truncate(s.Summary, digestSessionLineMax))
	}
	d.Themes = recurringThemes(sessions, current)
	d.Standing = standing(sessions[0], current, now)
	for count(d.Markdown()) > budget {
		switch {
		case len(d.Recent) > 1:
			d.Recent = d.Recent[:len(d.Recent)-1]
		case len(d.Themes) > 0:
			d.Themes = d.Themes[:len(d.Themes)-1]
		case len(d.Recent) == 1:
			d.Recent = d.Recent[:0]
		case len(d.Standing) > 0:
			d.Standing = d.Standing[:len(d.Standing)-1]
		default:
			// The heading alone: a budget this small is the caller's.
			d.Tokens = count(d.Markdown())
			return d
		}
	}
	d.Tokens = count(d.Markdown())
	return d
}

// recurringThemes are the feelings and topics that came up in more than
// one of the sessions, and how many of them had a breakthrough: one the
// facilitator reported (a key moment), or one a memory learnt in the
// session records.
func recurringThemes(sessions []EndedSession, current []LearnerMemory) []string {
	n := len(sessions)
	feelings := map[string]int{}
	var feelingOrder []string
	breakthroughs := 0
	inSession := map[string]bool{}
	for _, s := range sessions {
		inSession[s.ID] = true
		seen := map[string]bool{}
		for _, e := range s.Closing.EmotionalArc {
			if !seen[e] {
				seen[e] = true
				if feelings[e] == 0 {
					feelingOrder = append(feelingOrder, e)
				}
				feelings[e]++
			}
		}
		if len(s.Closing.KeyMoments) > 0 || slices.ContainsFunc(current, func(m LearnerMemory) bool {
			return isBreakthrough(m) && m.SessionID != nil && *m.SessionID == s.ID
		}) {
			breakthroughs++
		}
	}
	// A topic recurs when memories of it were learnt in two sessions or
	// more of those read.
	topicSessions := map[string]map[string]bool{}
	var topicOrder []string
	for _, m := range current {
		topic, _ := m.Metadata[MetaTopic].(string)
		topic = strings.ToLower(strings.TrimSpace(topic))
		if topic == "" || m.SessionID == nil || !inSession[*m.SessionID] {
			continue
		}
		if topicSessions[topic] == nil {
			topicSessions[topic] = map[string]bool{}
			topicOrder = append(topicOrder, topic)
		}
		topicSessions[topic][*m.SessionID] = true
	}
	var themes []string
	slices.SortStableFunc(topicOrder, func(a, b string) int { return cmp.Compare(len(topicSessions[b]), len(topicSessions[a])) })
	for _, topic := range topicOrder {
		if k := len(topicSessions[topic]); k > 1 {
			themes = append(themes, fmt.Sprintf("%s came up in %d of the last %d sessions.", capitalize(topic), k, n))
		}
	}
	slices.SortStableFunc(feelingOrder, func(a, b string) int { return cmp.Compare(feelings[b], feelings[a]) })
	for _, e := range feelingOrder {
		if k := feelings[e]; k > 1 {
			themes = append(themes, fmt.Sprintf("Felt %s in %d of the last %d sessions.", e, k, n))
		}
	}
	if breakthroughs > 1 {
		themes = append(themes, fmt.Sprintf("A breakthrough in %d of the last %d sessions.", breakthroughs, n))
	}
	return themes
}

// standing is where things stand after the latest session: how it ended,
// the struggles still open and what is next, from the current memories.
func standing(latest EndedSession, current []LearnerMemory, now time.Time) []string {
	var lines []string
	last := "The last session, " + latest.EndedAt.UTC().Format("Monday 2 January")
	if n := len(latest.Closing.EmotionalArc); n > 0 {
		last += ", ended " + latest.Closing.EmotionalArc[n-1]
	}
	lines = append(lines, last+".")
	var struggles, next []string
	for _, m := range byConfidence(current) {
		switch {
		case m.Type == Academic && isStruggle(m) && len(struggles) < digestStruggles:
			struggles = append(struggles, m.Content)
		case m.Type == Context && m.Metadata[MetaNextTopic] != nil && len(next) < digestNext && passedMoment(m, now) == "":
			next = append(next, m.Content)
		}
	}
	// The session's own words for what is next, unless a memory already
	// says the same.
	for _, hook := range latest.Closing.NextSessionHooks {
		said := slices.ContainsFunc(next, func(n string) bool { return alike(n, hook) >= sameThingSaid })
		if len(next) < digestNext && !said && MomentPassed(hook, latest.EndedAt, now) == "" {
			next = append(next, hook)
		}
	}
	if len(struggles) > 0 {
		lines = append(lines, "Still working on: "+joinSentences(struggles))
	}
	if len(next) > 0 {
		for i, n := range next {
			next[i] = nextLabel.ReplaceAllString(n, "")
		}
		lines = append(lines, "Next: "+joinSentences(next))
	}
	return lines
}

// nextLabel is a statement's own "Next:", which the line's label says.
var nextLabel = regexp.MustCompile(`(?i)^\s*next( time)?:\s*`)

// byConfidence is the memories, the most confident and latest first.
func byConfidence(memories []LearnerMemory) []LearnerMemory {
	sorted := slices.Clone(memories)
	slices.SortStableFunc(sorted, func(a, b LearnerMemory) int {
		if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
			return c
		}
		return b.LastSeenAt.Compare(a.LastSeenAt)
	})
	return sorted
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// Markdown is the digest as a section of the learner's profile page.
func (d SessionDigest) Markdown() string {
	if len(d.Sessions) == 0 {
		return ""
	}
	var b strings.Builder
	if len(d.Sessions) == 1 {
		b.WriteString("## The last session\n")
	} else {
		fmt.Fprintf(&b, "## The last %d sessions\n", len(d.Sessions))
	}
	section := func(heading string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n### %s\n\n", heading)
		for _, l := range lines {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	section("Where things stand", d.Standing)
	section("What keeps coming back", d.Themes)
	section("Session by session", d.Recent)
	return b.String()
}
