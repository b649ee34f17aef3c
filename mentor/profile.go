package mentor

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ProfileTokenBudget bounds a learner's profile, counted by a real BPE
// tokenizer (package tokens): the profile goes into the counselor's first
// message and the opening, and must leave room for the rest.
const ProfileTokenBudget = 1000

// Profile categories, in the order a facilitator reads them.
const (
	ProfileWho         = "who"         // who the learner is (personal)
	ProfileStrengths   = "strengths"   // what they do well, breakthroughs
	ProfileStruggles   = "struggles"   // what they have not mastered yet
	ProfileGoals       = "goals"       // goals and what is next
	ProfilePreferences = "preferences" // how they like to learn
	ProfileEmotional   = "emotional"   // how they respond to feelings
)

// ProfileCategories lists the categories in reading order, with their
// headings.
var ProfileCategories = []struct{ Key, Heading string }{
	{ProfileWho, "Who they are"},
	{ProfileStrengths, "Strengths and breakthroughs"},
	{ProfileStruggles, "Struggles"},
	{ProfileGoals, "Goals and what is next"},
	{ProfilePreferences, "How they like to learn"},
	{ProfileEmotional, "Emotional patterns"},
}

// Profile is what the mentor believes about a learner as a whole, in lines
// a facilitator reads at a glance, each standing on the memories it names.
type Profile struct {
	LearnerID   string        `json:"learner_id"`
	LearnerName string        `json:"learner_name"`
	Lines       []ProfileLine `json:"lines"`
	Tokens      int           `json:"tokens"`
	// Dropped are the memories left out to keep within the budget, and why.
	Dropped []DroppedLine `json:"dropped"`
	// Digest is what the last sessions add up to, kept with the profile
	// (its own budget, not in Tokens).
	Digest    SessionDigest `json:"digest"`
	UpdatedAt time.Time     `json:"updated_at"`
}

// ProfileLine is one line of a profile.
type ProfileLine struct {
	Category  string   `json:"category"`
	Text      string   `json:"text"`
	MemoryIDs []string `json:"memory_ids"`
	// ByFacilitator marks a line a facilitator wrote: consolidation keeps
	// it as written.
	ByFacilitator bool `json:"by_facilitator"`
	// protected lines (a breakthrough, a core emotional pattern) are
	// never dropped for the budget, only gathered.
	protected bool
	// confidence and lastSeen order lines to drop: the least confident and
	// oldest first.
	confidence float64
	lastSeen   time.Time
	topic      string
	tokens     int // of the line's bullet, once counted
}

// DroppedLine is a memory a profile left out for its budget.
type DroppedLine struct {
	MemoryIDs []string `json:"memory_ids"`
	Text      string   `json:"text"`
	Reason    string   `json:"reason"`
}

// TokenCounter counts the tokens of a text as the model's tokenizer does.
type TokenCounter func(text string) int

// BuildProfile builds a learner's profile from their current memories and
// the lines the facilitator wrote, within budget tokens (the lines'
// Markdown, as Markdown renders it). Over budget, it compresses in this
// order: similar lines of a category become one (a pattern standing on
// every memory of it), then the least confident, oldest lines leave, each
// recorded in Dropped; a breakthrough or a core emotional pattern never
// leaves: when they alone are over budget, those of a category are
// gathered into one line naming their topics, still standing on each.
func BuildProfile(learnerID, name string, current []LearnerMemory, own []ProfileLine, budget int, count TokenCounter, now time.Time) Profile {
	p := Profile{LearnerID: learnerID, LearnerName: name, UpdatedAt: now, Dropped: []DroppedLine{}}
	lines := []ProfileLine{}
	for _, l := range own {
		l.ByFacilitator, l.protected = true, true
		lines = append(lines, l)
	}
	for _, m := range current {
		if category := profileCategory(m); category != "" {
			// Lines gather by topic, or by kind where there is none.
			topic, _ := m.Metadata[MetaTopic].(string)
			kind, _ := m.Metadata[MetaCategory].(string)
			lines = append(lines, ProfileLine{Category: category, Text: m.Content, MemoryIDs: []string{m.ID},
				protected:  category == ProfileEmotional || isBreakthrough(m),
				confidence: m.Confidence, lastSeen: m.LastSeenAt, topic: strings.ToLower(cmp.Or(topic, kind))})
		}
	}
	sortLines(lines)
	// A page's tokens are, near enough, its heading's and its bullets',
	// each counted once; the page as rendered is counted at the end.
	fits := func() bool { return pageTokens(name, lines, count) <= budget }

	if !fits() {
		lines = gatherSimilar(lines)
	}
	// The least confident, oldest lines that may leave, first.
	for !fits() {
		i := dropCandidate(lines)
		if i < 0 {
			break
		}
		p.Dropped = append(p.Dropped, DroppedLine{MemoryIDs: lines[i].MemoryIDs, Text: lines[i].Text,
			Reason: "over the profile's budget: among the least confident and oldest"})
		lines = slices.Delete(lines, i, i+1)
	}
	for _, category := range []string{ProfileStrengths, ProfileEmotional} {
		if !fits() {
			lines = gatherCategory(lines, category)
		}
	}
	p.Lines = lines
	p.Tokens = count(RenderProfileMarkdown(name, lines))
	return p
}

// pageTokens estimates the tokens of the page of lines: its title, the
// headings of the categories it has, and each bullet, counted once.
func pageTokens(name string, lines []ProfileLine, count TokenCounter) int {
	total := count("# " + cmp.Or(name, "Learner") + "\n")
	headed := map[string]bool{}
	for i := range lines {
		l := &lines[i]
		if l.tokens == 0 {
			l.tokens = count("- " + l.Text + "\n")
		}
		total += l.tokens
		if !headed[l.Category] {
			headed[l.Category] = true
			total += profileHeadingTokens
		}
	}
	return total
}

// profileHeadingTokens is what a category's heading costs: "\n## " and two
// to five words.
const profileHeadingTokens = 8

// profileCategory is where a memory stands in the profile, or "" for one
// that describes a moment rather than the learner (a context memory that
// names no next step).
func profileCategory(m LearnerMemory) string {
	switch {
	case m.Type == Personal:
		return ProfileWho
	case m.Type == Academic && isStruggle(m):
		return ProfileStruggles
	case m.Type == Academic:
		return ProfileStrengths
	case m.Type == Preference && (metaIs(m, MetaCategory, "emotional_response") || m.Metadata[MetaTrigger] != nil):
		return ProfileEmotional
	case m.Type == Preference:
		return ProfilePreferences
	case m.Type == Context && m.Metadata[MetaNextTopic] != nil:
		return ProfileGoals
	}
	return ""
}

// sortLines orders lines by category, a facilitator's first, then the
// most confident and latest.
func sortLines(lines []ProfileLine) {
	order := map[string]int{}
	for i, c := range ProfileCategories {
		order[c.Key] = i
	}
	slices.SortStableFunc(lines, func(a, b ProfileLine) int {
		if c := cmp.Compare(order[a.Category], order[b.Category]); c != 0 {
			return c
		}
		if a.ByFacilitator != b.ByFacilitator {
			if a.ByFacilitator {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.confidence, a.confidence); c != 0 {
			return c
		}
		return b.lastSeen.Compare(a.lastSeen)
	})
}

// gatherSimilar makes the lines of one category and topic a pattern: the
// first line's text and how many more, standing on every memory of them.
// A facilitator's lines stay as written.
func gatherSimilar(lines []ProfileLine) []ProfileLine {
	var out []ProfileLine
	at := map[string]int{}
	more := map[int]int{}
	for _, l := range lines {
		key := l.Category + "\x00" + l.topic
		i, seen := at[key]
		if l.ByFacilitator || l.topic == "" || !seen {
			if !l.ByFacilitator && l.topic != "" {
				at[key] = len(out)
			}
			out = append(out, l)
			continue
		}
		out[i].MemoryIDs = append(out[i].MemoryIDs, l.MemoryIDs...)
		out[i].protected = out[i].protected || l.protected
		out[i].confidence = max(out[i].confidence, l.confidence)
		more[i]++
	}
	for i, n := range more {
		out[i].Text = fmt.Sprintf("%s (and %d more on %s)", out[i].Text, n, out[i].topic)
		out[i].tokens = 0
	}
	return out
}

// dropCandidate is the line to leave out next: of those that may leave,
// the least confident, then the oldest; -1 when none may.
func dropCandidate(lines []ProfileLine) int {
	best := -1
	for i, l := range lines {
		if l.protected {
			continue
		}
		if best < 0 || l.confidence < lines[best].confidence ||
			(l.confidence == lines[best].confidence && l.lastSeen.Before(lines[best].lastSeen)) {
			best = i
		}
	}
	return best
}

// gatherCategory makes every line of category that is not a facilitator's
// one line naming their topics, standing on all their memories.
func gatherCategory(lines []ProfileLine, category string) []ProfileLine {
	var out []ProfileLine
	gathered := ProfileLine{Category: category, protected: true}
	var topics []string
	first := -1
	for _, l := range lines {
		if l.Category != category || l.ByFacilitator {
			out = append(out, l)
			continue
		}
		if first < 0 {
			first = len(out)
			out = append(out, ProfileLine{})
		}
		gathered.MemoryIDs = append(gathered.MemoryIDs, l.MemoryIDs...)
		topic := cmp.Or(l.topic, "other")
		if !slices.Contains(topics, topic) {
			topics = append(topics, topic)
		}
	}
	if first < 0 {
		return lines
	}
	if len(topics) > gatheredTopics {
		topics = append(topics[:gatheredTopics], fmt.Sprintf("%d more", len(topics)-gatheredTopics))
	}
	gathered.Text = fmt.Sprintf("%d memories, on %s", len(gathered.MemoryIDs), strings.Join(topics, ", "))
	out[first] = gathered
	return out
}

// gatheredTopics bounds the topics a gathered line names.
const gatheredTopics = 12

// RenderProfileMarkdown is the profile as a Markdown page: a heading per
// category that has lines, a bullet per line.
func RenderProfileMarkdown(name string, lines []ProfileLine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", cmp.Or(name, "Learner"))
	for _, c := range ProfileCategories {
		heading := false
		for _, l := range lines {
			if l.Category != c.Key {
				continue
			}
			if !heading {
				fmt.Fprintf(&b, "\n## %s\n\n", c.Heading)
				heading = true
			}
			fmt.Fprintf(&b, "- %s\n", l.Text)
		}
	}
	return b.String()
}

// OwnLines are the lines of a profile a facilitator wrote.
func (p Profile) OwnLines() []ProfileLine {
	own := []ProfileLine{}
	for _, l := range p.Lines {
		if l.ByFacilitator {
			own = append(own, ProfileLine{Category: l.Category, Text: l.Text, MemoryIDs: []string{}, ByFacilitator: true})
		}
	}
	return own
}

// Markdown is the profile as a readable page, the digest of the last
// sessions at its end.
func (p Profile) Markdown() string {
	page := RenderProfileMarkdown(p.LearnerName, p.Lines)
	if digest := p.Digest.Markdown(); digest != "" {
		page += "\n" + digest
	}
	return page
}

// Limits on the lines a facilitator writes: a few short lines, within half
// the profile's budget, so the memories keep room.
const (
	MaxOwnProfileLines     = 20
	MaxOwnProfileLineChars = 300
	MaxOwnProfileTokens    = ProfileTokenBudget / 2
)

// WithOwnLines is the profile with the facilitator's lines replaced by own
// (checked and cleaned), counted again. The lines built from memories stay
// until the next consolidation rebuilds them within the budget.
func (p Profile) WithOwnLines(own []ProfileLine, count TokenCounter, now time.Time) (Profile, error) {
	if len(own) > MaxOwnProfileLines {
		return p, Errorf(CodeInvalid, "at most %d lines of your own", MaxOwnProfileLines)
	}
	known := map[string]bool{}
	for _, c := range ProfileCategories {
		known[c.Key] = true
	}
	lines := []ProfileLine{}
	for _, l := range own {
		if !known[l.Category] {
			return p, Errorf(CodeInvalid, "category must be one of who, strengths, struggles, goals, preferences, emotional")
		}
		text, err := requiredText(l.Text, "Line", MaxOwnProfileLineChars)
		if err != nil {
			return p, err
		}
		lines = append(lines, ProfileLine{Category: l.Category, Text: text, MemoryIDs: []string{}, ByFacilitator: true, protected: true})
	}
	if n := count(RenderProfileMarkdown(p.LearnerName, lines)); n > MaxOwnProfileTokens {
		return p, Errorf(CodeInvalid, "your lines take %d tokens; they may take at most %d, half the profile", n, MaxOwnProfileTokens)
	}
	for _, l := range p.Lines {
		if !l.ByFacilitator {
			lines = append(lines, l)
		}
	}
	sortLines(lines)
	p.Lines, p.UpdatedAt = lines, now
	p.Tokens = count(RenderProfileMarkdown(p.LearnerName, p.Lines))
	return p, nil
}
