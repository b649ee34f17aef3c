package mentor

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ConsolidationPlan is what a consolidation run changes in one learner's
// current memories, so that what the mentor knows stays true: repeats that
// slipped past the merge at storing become one memory, a newer memory that
// contradicts an older one supersedes it, a dated moment that has passed or
// a thread that was finished expires, and a struggle a later breakthrough
// settled is resolved. No change rewrites a memory's text.
type ConsolidationPlan struct {
	Merges        []Merge        `json:"merges"`
	Supersessions []Supersession `json:"supersessions"`
	Expiries      []Expiry       `json:"expiries"`
	Resolutions   []Resolution   `json:"resolutions"`
	// ModelTokens are what planning cost a model, if one planned.
	ModelTokens int `json:"-"`
}

// Merge makes Absorbed one memory with Keep: Keep takes their mentions and
// sources, and each of them is superseded by Keep.
type Merge struct {
	Keep     string   `json:"keep"`
	Absorbed []string `json:"absorbed"`
}

// Supersession: New, a newer memory, contradicts Old.
type Supersession struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// Expiry: the memory's moment has passed, or its thread was finished.
type Expiry struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Resolution: By, a later breakthrough, settled the struggle ID.
type Resolution struct {
	ID string `json:"id"`
	By string `json:"by"`
}

// Counts are how many changes of each kind the plan makes, by the kind's
// name in the audit trail.
func (p ConsolidationPlan) Counts() map[string]int {
	absorbed := 0
	for _, m := range p.Merges {
		absorbed += len(m.Absorbed)
	}
	return map[string]int{ChangeMerged: absorbed, ChangeSuperseded: len(p.Supersessions),
		ChangeExpired: len(p.Expiries), ChangeResolved: len(p.Resolutions)}
}

// Validate checks a plan against the learner's current memories it was
// made from: every id is one of them, no memory takes part in two changes,
// a memory that replaces, settles or keeps another is not itself going
// away, and two memories a person wrote are never merged (the one kept
// would stand for words the person did not write).
func (p ConsolidationPlan) Validate(current []LearnerMemory) error {
	byID := map[string]LearnerMemory{}
	for _, m := range current {
		byID[m.ID] = m
	}
	changed := map[string]bool{}
	change := func(id string) error {
		if _, ok := byID[id]; !ok {
			return fmt.Errorf("unknown memory %q", id)
		}
		if changed[id] {
			return fmt.Errorf("memory %q takes part in two changes", id)
		}
		changed[id] = true
		return nil
	}
	var standing []string // memories other changes rest on
	for _, m := range p.Merges {
		if len(m.Absorbed) == 0 {
			return fmt.Errorf("merge into %q absorbs nothing", m.Keep)
		}
		for _, id := range append([]string{m.Keep}, m.Absorbed...) {
			if err := change(id); err != nil {
				return err
			}
		}
		for _, id := range m.Absorbed {
			if byID[m.Keep].Source == SourceAdded && byID[id].Source == SourceAdded {
				return fmt.Errorf("merge of %q and %q: both were written by a person", m.Keep, id)
			}
		}
	}
	for _, s := range p.Supersessions {
		if err := change(s.Old); err != nil {
			return err
		}
		standing = append(standing, s.New)
	}
	for _, e := range p.Expiries {
		if err := change(e.ID); err != nil {
			return err
		}
	}
	for _, r := range p.Resolutions {
		if err := change(r.ID); err != nil {
			return err
		}
		standing = append(standing, r.By)
	}
	for _, id := range standing {
		if _, ok := byID[id]; !ok {
			return fmt.Errorf("unknown memory %q", id)
		}
		if changed[id] && !slices.ContainsFunc(p.Merges, func(m Merge) bool { return m.Keep == id }) {
			return fmt.Errorf("memory %q replaces or settles another and goes away itself", id)
		}
	}
	return nil
}

// Thresholds of the offline consolidator's rules, on the share of content
// words two memories have in common (contentWords, Jaccard).
const (
	// consolidateRepeat: two memories this alike say the same thing.
	consolidateRepeat = 0.7
	// consolidateContradiction: a negated memory this alike to another is
	// about the same thing, said the other way round.
	consolidateContradiction = 0.5
)

// ConsolidateOffline plans a consolidation by rules, without a model, from a
// learner's current memories as of now. What it cannot do that a model
// does: it finds a contradiction only when one statement holds a negation
// and the other does not, a finished thread only when a later memory names
// its topic, and a dated moment only in the words of a week (today,
// tomorrow, a weekday, this or next week); it never rewords or summarizes.
func ConsolidateOffline(current []LearnerMemory, now time.Time) ConsolidationPlan {
	memories := slices.Clone(current)
	slices.SortFunc(memories, func(a, b LearnerMemory) int { return a.CreatedAt.Compare(b.CreatedAt) })
	words := make(map[string]map[string]bool, len(memories))
	for _, m := range memories {
		words[m.ID] = contentWords(m.Content)
	}
	var plan ConsolidationPlan
	gone := map[string]bool{} // memories a change takes out of recall
	kept := map[string]bool{} // memories another change rests on

	for i, m := range memories {
		if m.Type != Context {
			continue
		}
		if reason := passedMoment(m, now); reason != "" {
			plan.Expiries = append(plan.Expiries, Expiry{ID: m.ID, Reason: reason})
			gone[m.ID] = true
			continue
		}
		if later := finishedBy(m, memories[i+1:]); later != "" {
			plan.Expiries = append(plan.Expiries, Expiry{ID: m.ID, Reason: "finished: " + later})
			gone[m.ID] = true
		}
	}
	for i, m := range memories {
		if gone[m.ID] || !isStruggle(m) {
			continue
		}
		for _, later := range memories[i+1:] {
			if !gone[later.ID] && isBreakthrough(later) && sameTopic(m, later) {
				plan.Resolutions = append(plan.Resolutions, Resolution{ID: m.ID, By: later.ID})
				gone[m.ID], kept[later.ID] = true, true
				break
			}
		}
	}
	for i, m := range memories {
		if gone[m.ID] || kept[m.ID] {
			continue
		}
		for _, later := range memories[i+1:] {
			if !gone[later.ID] && later.Type == m.Type && Contradicts(m.Content, later.Content) &&
				alike(withoutNegation(m.Content), withoutNegation(later.Content)) >= consolidateContradiction {
				plan.Supersessions = append(plan.Supersessions, Supersession{Old: m.ID, New: later.ID})
				gone[m.ID], kept[later.ID] = true, true
				break
			}
		}
	}
	for i, m := range memories {
		if gone[m.ID] {
			continue
		}
		merge := Merge{Keep: m.ID}
		for _, other := range memories[i+1:] {
			if gone[other.ID] || kept[other.ID] || other.Type != m.Type ||
				(m.Source == SourceAdded && other.Source == SourceAdded) ||
				Contradicts(m.Content, other.Content) || jaccard(words[m.ID], words[other.ID]) < consolidateRepeat {
				continue
			}
			// A person's words are the ones kept.
			if other.Source == SourceAdded {
				merge.Absorbed = append(merge.Absorbed, merge.Keep)
				merge.Keep = other.ID
			} else {
				merge.Absorbed = append(merge.Absorbed, other.ID)
			}
			gone[other.ID] = true
		}
		if len(merge.Absorbed) > 0 {
			plan.Merges = append(plan.Merges, merge)
			gone[m.ID] = true
		}
	}
	return plan
}

func alike(a, b string) float64 { return jaccard(contentWords(a), contentWords(b)) }

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	shared := 0
	for w := range a {
		if b[w] {
			shared++
		}
	}
	return float64(shared) / float64(len(a)+len(b)-shared)
}

// withoutNegation is a statement with its negations taken out, to compare
// what two statements are about.
func withoutNegation(statement string) string {
	return negation.ReplaceAllString(statement, " ")
}

// isStruggle: an academic memory of something not yet mastered.
func isStruggle(m LearnerMemory) bool {
	return m.Type == Academic && (metaIs(m, MetaResolution, "unresolved") || metaIs(m, MetaValence, "negative"))
}

// isBreakthrough: an academic memory of something that went well.
func isBreakthrough(m LearnerMemory) bool {
	return m.Type == Academic && (metaIs(m, MetaResolution, "resolved") || metaIs(m, MetaValence, "positive"))
}

// sameTopic: both memories name the same topic in their metadata.
func sameTopic(a, b LearnerMemory) bool {
	ta, _ := a.Metadata[MetaTopic].(string)
	tb, _ := b.Metadata[MetaTopic].(string)
	return ta != "" && strings.EqualFold(strings.TrimSpace(ta), strings.TrimSpace(tb))
}

func metaIs(m LearnerMemory, key, value string) bool {
	v, _ := m.Metadata[key].(string)
	return strings.EqualFold(v, value)
}

// finishedBy names the later memory that took up a thread's next topic
// (a context memory's next_topic), or "".
func finishedBy(thread LearnerMemory, later []LearnerMemory) string {
	next, _ := thread.Metadata[MetaNextTopic].(string)
	nextWords := contentWords(next)
	if len(nextWords) == 0 {
		return ""
	}
	for _, m := range later {
		if m.Type == Context {
			continue
		}
		topic, _ := m.Metadata[MetaTopic].(string)
		if strings.EqualFold(strings.TrimSpace(topic), strings.TrimSpace(next)) {
			return m.ID
		}
	}
	return ""
}

// weekMoment finds a moment named in the words of a week: "today",
// "tonight", "tomorrow", "this weekend", "this week", "next week", or a
// weekday ("on Friday", "Friday's test"). Plural weekdays and "every
// Friday" are routines, not moments.
var weekMoment = regexp.MustCompile(`(?i)\b(every\s+)?(today|tonight|tomorrow|this weekend|this week|next week|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(s\b)?`)

// passedMoment says why a context memory's moment has passed, or "".
func passedMoment(m LearnerMemory, now time.Time) string {
	return MomentPassed(m.Content, m.CreatedAt, now)
}

// MomentPassed says why the moment a text names has passed by now, or "":
// the day it names ("on Friday", "tomorrow"), counted from the day the text
// was said, is before now's. Days are those of now's time zone, the
// facilitator's when it is known: said on Thursday evening in New York
// (Friday in UTC), "tomorrow" is Friday there.
func MomentPassed(text string, said, now time.Time) string {
	match := weekMoment.FindStringSubmatch(text)
	if match == nil || match[1] != "" || match[3] != "" {
		return ""
	}
	made := day(said.In(now.Location()))
	var due time.Time
	switch name := strings.ToLower(match[2]); name {
	case "today", "tonight":
		due = made
	case "tomorrow":
		due = made.AddDate(0, 0, 1)
	case "this weekend", "this week":
		due = onOrAfter(made, time.Sunday)
	case "next week":
		due = onOrAfter(made, time.Sunday).AddDate(0, 0, 7)
	default:
		due = onOrAfter(made, weekdays[name])
	}
	if !day(now).After(due) {
		return ""
	}
	return fmt.Sprintf("past: %s was %s", match[2], due.Format("Monday 2 January"))
}

// weekdays are the days by their lower-case names (weekdayNames).
var weekdays = func() map[string]time.Weekday {
	m := map[string]time.Weekday{}
	for i, name := range weekdayNames {
		m[name] = time.Weekday(i)
	}
	return m
}()

// day is t's calendar day, in t's time zone.
func day(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// onOrAfter is the first day on or after from that falls on weekday.
func onOrAfter(from time.Time, weekday time.Weekday) time.Time {
	return from.AddDate(0, 0, (int(weekday)-int(from.Weekday())+7)%7)
}

// Why a consolidation run was queued.
const (
	TriggerSessionEnd = "session_end"
	TriggerNightly    = "nightly"
	TriggerOnDemand   = "on_demand"
)

// ConsolidationRun is one run of consolidation for a learner, as the audit
// trail keeps it.
type ConsolidationRun struct {
	ID        string `json:"id"`
	LearnerID string `json:"learner_id"`
	Trigger   string `json:"trigger"`
	// Status is queued, running, done or failed.
	Status       string     `json:"status"`
	Consolidator *string    `json:"consolidator"`
	StartedAt    *time.Time `json:"started_at"`
	FinishedAt   *time.Time `json:"finished_at"`
	DurationMS   *int64     `json:"duration_ms"`
	// MemoriesIn are the learner's current memories when it started;
	// MemoriesOut, when it ended.
	MemoriesIn  *int           `json:"memories_in"`
	MemoriesOut *int           `json:"memories_out"`
	Changes     map[string]int `json:"changes"`
	ModelTokens int            `json:"model_tokens"`
	// ProfileTokensBefore and After are the profile's size before and after.
	ProfileTokensBefore *int      `json:"profile_tokens_before"`
	ProfileTokensAfter  *int      `json:"profile_tokens_after"`
	Error               *string   `json:"error"`
	CreatedAt           time.Time `json:"created_at"`
}

// ConsolidationInput is what a run starts from: the learner's current
// memories, their name, their profile as it stands and their last sessions.
type ConsolidationInput struct {
	Memories    []LearnerMemory
	LearnerName string
	// OtherNames are the facilitator's other learners', which a model's
	// prompt hides like the learner's own.
	OtherNames []string
	Profile    Profile
	// Sessions are the learner's latest ended sessions, latest first.
	Sessions []EndedSession
}

// Remaining are the memories of current that the plan leaves current.
func (p ConsolidationPlan) Remaining(current []LearnerMemory) []LearnerMemory {
	gone := map[string]bool{}
	for _, m := range p.Merges {
		for _, id := range m.Absorbed {
			gone[id] = true
		}
	}
	for _, s := range p.Supersessions {
		gone[s.Old] = true
	}
	for _, e := range p.Expiries {
		gone[e.ID] = true
	}
	for _, r := range p.Resolutions {
		gone[r.ID] = true
	}
	var out []LearnerMemory
	for _, m := range current {
		if !gone[m.ID] {
			out = append(out, m)
		}
	}
	return out
}

// ConsolidationJob is a queued consolidation run of one learner.
type ConsolidationJob struct {
	Job
	RunID string
}

// Consolidator plans a consolidation of a learner's current memories.
type Consolidator interface {
	// Name is recorded with each run ("offline", or the model's).
	Name() string
	Plan(ctx context.Context, in ConsolidationInput, now time.Time) (ConsolidationPlan, error)
}

// OfflineConsolidator plans by rules (ConsolidateOffline), with no model.
type OfflineConsolidator struct{}

func (OfflineConsolidator) Name() string { return "offline" }

func (OfflineConsolidator) Plan(_ context.Context, in ConsolidationInput, now time.Time) (ConsolidationPlan, error) {
	return ConsolidateOffline(in.Memories, now), nil
}
