package mentor

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Opening is the precomputed start of the next session with a learner: it
// is built when a session ends, so the first message needs no model call.
// It speaks to the facilitator, who is the one in the chat, about the
// learner.
type Opening struct {
	LearnerID  *string   `json:"learner_id"`
	SessionID  string    `json:"from_session_id"`
	ComputedAt time.Time `json:"computed_at"`
	// WelcomeHook is one line to greet with, tied to the last session.
	WelcomeHook        string   `json:"welcome_hook"`
	LastSessionSummary string   `json:"last_session_summary"`
	UnfinishedThreads  []string `json:"unfinished_threads"`
	// PersonalByWeekday holds the personal memories that mention a day of
	// the week, by lower-case weekday; PersonalRelevance is filled from it
	// for the day the opening is read.
	PersonalByWeekday  map[string][]string `json:"personal_by_weekday,omitempty"`
	PersonalRelevance  []string            `json:"personal_relevance"`
	LastEmotionalState string              `json:"last_emotional_state"`
	// SuggestedOpener is what the mentor may say first; it begins with
	// welcomeBack, which Greet names the facilitator in as it is read.
	SuggestedOpener string `json:"suggested_opener"`
	// RecentSessions is the digest of the learner's last sessions, as the
	// latest consolidation kept it; added when the opening is read.
	RecentSessions *SessionDigest `json:"recent_sessions,omitempty"`
}

// How a welcome hook begins: with the learner's breakthrough, an
// unfinished thread, or, when the last session left neither, pickingUp.
// The suggested opener begins with welcomeBack.
const (
	breakthroughHook = "A breakthrough last time: "
	leftOffWith      = "Last time you and I left off with: "
	pickingUp        = "Picking up from last time."
	welcomeBack      = "Welcome back."
)

// maxOpeningTopic bounds the topic an opener names ("long division"); a
// longer one is no topic but a sentence.
const maxOpeningTopic = 60

var weekdayNames = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

var weekdayPattern = regexp.MustCompile(`(?i)\b(sunday|monday|tuesday|wednesday|thursday|friday|saturday)s?\b`)

// BuildOpening prepares the next session from how the last one closed, the
// conversation's summary and what is known about the learner (personal and
// context memories, and the academic ones learnt in the session that
// ended, best first).
func BuildOpening(ended ClosingState, summary string, known []LearnerMemory, learnerName string, now time.Time) Opening {
	o := Opening{
		SessionID:          ended.SessionID,
		ComputedAt:         now,
		LastSessionSummary: summary,
		UnfinishedThreads:  slices.Clone(ended.NextSessionHooks),
		PersonalByWeekday:  map[string][]string{},
	}
	if n := len(ended.EmotionalArc); n > 0 {
		o.LastEmotionalState = ended.EmotionalArc[n-1]
	}
	// What the session worked on, and what the learner achieved in it, as
	// the memories learnt from it say.
	var topic, achieved string
	for _, m := range known {
		fromEnded := m.SessionID != nil && *m.SessionID == ended.SessionID
		switch m.Type {
		case Academic:
			if !fromEnded {
				continue
			}
			if t, _ := m.Metadata[MetaTopic].(string); topic == "" && utf8.RuneCountInString(t) <= maxOpeningTopic {
				topic = strings.Join(strings.Fields(t), " ")
			}
			if achieved == "" && isBreakthrough(m) {
				achieved = m.Content
			}
		case Context:
			// Continuity from earlier sessions was either picked up in
			// the one that ended or superseded by it.
			if fromEnded {
				o.UnfinishedThreads = appendLatest(o.UnfinishedThreads, m.Content, closingHooksMax+2)
			}
		case Personal:
			for _, day := range weekdayPattern.FindAllStringSubmatch(m.Content, -1) {
				key := strings.ToLower(day[1])
				if !slices.Contains(o.PersonalByWeekday[key], m.Content) {
					o.PersonalByWeekday[key] = append(o.PersonalByWeekday[key], m.Content)
				}
			}
		}
	}
	// What the facilitator told of it comes first: key moments are only
	// ever the learner's words and deeds as reported (LearnerBreakthrough).
	if n := len(ended.KeyMoments); n > 0 {
		achieved = ended.KeyMoments[n-1]
	}
	switch {
	case achieved != "":
		o.WelcomeHook = breakthroughHook + asSentence(achieved)
	case len(o.UnfinishedThreads) > 0:
		o.WelcomeHook = leftOffWith + o.UnfinishedThreads[0]
	case summary != "":
		o.WelcomeHook = pickingUp
	}
	o.SuggestedOpener = welcomeBack + " " + openerBody(o, topic, learnerName)
	return o
}

// openerBody is what the opener says after its welcome, to the facilitator
// about the learner: what the two of them worked on, then a question that
// fits how the last session ended. The learner is named once.
func openerBody(o Opening, topic, learnerName string) string {
	var body []string
	with, about := "", ""
	switch {
	case topic != "" && learnerName != "":
		body = append(body, "Last time you and I worked on "+topic+" with "+learnerName+".")
	case topic != "":
		body = append(body, "Last time you and I worked on "+topic+".")
	case learnerName != "":
		with, about = " with "+learnerName, " about "+learnerName
	}
	switch {
	case o.LastEmotionalState != "" && !positiveEmotion(o.LastEmotionalState):
		body = append(body, "The last session"+with+" had its "+o.LastEmotionalState+" moments; how have things been since?")
	case len(o.UnfinishedThreads) > 0:
		body = append(body, "Shall we pick up where we left off"+with+"?")
	default:
		body = append(body, "What's on your mind"+about+" today?")
	}
	return strings.Join(body, " ")
}

// asSentence ends s as a sentence, unless it ends as one already (or in a
// quotation).
func asSentence(s string) string {
	s = strings.TrimSpace(s)
	if r, _ := utf8.DecodeLastRuneInString(s); s == "" || strings.ContainsRune(".!?…\"'”’", r) {
		return s
	}
	return s + "."
}

// Greet names the facilitator in the opener's welcome ("Welcome back,
// Dana."), as the opening is read by them; the name comes from their
// sign-in (Caller.FirstName). With no name the welcome stays unnamed, and
// an opener stored before openings spoke to the facilitator is left as it
// is.
func (o Opening) Greet(facilitatorName string) Opening {
	if rest, ok := strings.CutPrefix(o.SuggestedOpener, welcomeBack); ok && facilitatorName != "" {
		o.SuggestedOpener = "Welcome back, " + facilitatorName + "." + rest
	}
	return o
}

// ForDay fills in what is personally relevant on the given day ("it's
// Friday: basketball game?") and leads the opener with it. The day is the
// facilitator's: its time zone decides when a thread's day has passed.
func (o Opening) ForDay(day time.Time) Opening {
	// A thread whose day has passed since the opening was made is not
	// pending any more ("a test on Friday", read on Monday).
	pending := []string{}
	for _, thread := range o.UnfinishedThreads {
		if MomentPassed(thread, o.ComputedAt, day) == "" {
			pending = append(pending, thread)
		} else if o.WelcomeHook == leftOffWith+thread {
			o.WelcomeHook = pickingUp
		}
	}
	o.UnfinishedThreads = pending
	// With nothing pending from the last session, what keeps coming back
	// across the last few is the thread to pick up.
	if d := o.RecentSessions; d != nil && len(d.Themes) > 0 && (o.WelcomeHook == "" || o.WelcomeHook == pickingUp) {
		o.WelcomeHook = "Lately: " + d.Themes[0]
	}
	weekday := weekdayNames[day.Weekday()]
	o.PersonalRelevance = []string{}
	today := o.PersonalByWeekday[weekday]
	for _, content := range today {
		o.PersonalRelevance = append(o.PersonalRelevance, "It's "+day.Weekday().String()+": "+content)
	}
	o.PersonalByWeekday = nil
	if len(o.PersonalRelevance) > 0 {
		o.SuggestedOpener = strings.TrimSpace(o.SuggestedOpener + " (It's " + day.Weekday().String() + ": ask about " +
			strings.TrimSuffix(today[0], ".") + ".)")
	}
	return o
}
