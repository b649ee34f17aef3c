package searchquality

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"mentormemory/test/textgen"
)

// When sessions were held, and the questions that name it. Every session
// is posted with its turns' times (created_at), as a client importing
// history posts them: most were held on days of 2022 to 2024, a session
// every few days, and a few of the sessions that state a fact in the last
// weeks before the set is loaded, so that questions can name a time
// relative to today ("last week"). Each dated question asks about a fact
// and names the time of the session that states it: a day, a month, a
// season, a year, or a time relative to today.
//
// All of it is drawn from a random stream of its own, so the undated set
// (sessions, turns and questions) is the same with or without it.

// KindDated is a question that names when the conversation took place
// ("What was going on with Emma on 4 December 2023?"). It is scored apart
// from the other kinds: see table.
const KindDated = "dated"

// turnGap is the time between two turns of a session.
const turnGap = 2 * time.Minute

// Start is when the session's first turn was said, for a set loaded on
// the day today (midnight UTC).
func (s *Session) Start(today time.Time) time.Time {
	if s.Ago == "" {
		return s.At
	}
	for _, r := range recentTimes {
		if r.phrase == s.Ago {
			return r.day(today).Add(18 * time.Hour)
		}
	}
	panic("searchquality: unknown recent time " + s.Ago)
}

// TurnTime is when the session's i-th turn (from 0) was said.
func (s *Session) TurnTime(today time.Time, i int) time.Time {
	return s.Start(today).Add(time.Duration(i) * turnGap)
}

// recentTimes are the times relative to today that sessions of the last
// weeks are held at, as a question names them, with the day each one
// means (today is midnight UTC). A session is held at 18:00 UTC that day,
// so every one is over before the day it is loaded.
var recentTimes = []struct {
	phrase string
	day    func(today time.Time) time.Time
}{
	{"yesterday", func(t time.Time) time.Time { return t.AddDate(0, 0, -1) }},
	{"two days ago", func(t time.Time) time.Time { return t.AddDate(0, 0, -2) }},
	{"4 days ago", func(t time.Time) time.Time { return t.AddDate(0, 0, -4) }},
	// The Wednesday of the calendar week (Monday to Sunday) before this one.
	{"last week", func(t time.Time) time.Time {
		sinceMonday := (int(t.Weekday()) + 6) % 7
		return t.AddDate(0, 0, -sinceMonday-7+2)
	}},
	{"three weeks ago", func(t time.Time) time.Time { return t.AddDate(0, 0, -21) }},
	// The 15th of the month before this one.
	{"last month", func(t time.Time) time.Time {
		return time.Date(t.Year(), t.Month()-1, 15, 0, 0, 0, 0, time.UTC)
	}},
	// The middle of the latest summer (June to August) that is over.
	{"last summer", func(t time.Time) time.Time {
		year := t.Year()
		if t.Month() < time.September {
			year--
		}
		return time.Date(year, time.July, 15, 0, 0, 0, 0, time.UTC)
	}},
}

// recentSessions is how many of an account's fact sessions were held in
// the last weeks.
const recentSessions = 3

// datedShare is the share of the other facts asked about by their date.
const datedShare = 0.35

// dateSessions gives every session of f its time: in order, from a day
// early in 2022, a few days apart, at an evening hour; and to a few of
// the sessions that state facts, a time of the last weeks instead.
func dateSessions(rng *rand.Rand, f *Facilitator, factSessions []string) {
	day := time.Date(2022, time.January, 3, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(150))
	for i := range f.Sessions {
		f.Sessions[i].At = day.Add(18*time.Hour + time.Duration(rng.IntN(180))*time.Minute)
		day = day.AddDate(0, 0, 2+rng.IntN(20))
	}
	recent := rng.Perm(len(recentTimes))
	for k, i := range rng.Perm(len(factSessions))[:recentSessions] {
		f.session(factSessions[i]).Ago = recentTimes[recent[k]].phrase
	}
}

// session is the account's session with the given id.
func (f *Facilitator) session(id string) *Session {
	return &f.Sessions[slices.IndexFunc(f.Sessions, func(s Session) bool { return s.ID == id })]
}

// Frames of the dated questions: a fact's question with the time added,
// its "about" phrase, or nothing but the learner (or, for a general fact,
// nothing at all) and the time.
var (
	aboutTimeFrames = []string{
		"What did we say about {about} {time}?",
		"What came up about {about} {time}?",
		"Remind me what I told you about {about} {time}",
	}
	learnerTimeFrames = []string{
		"What was going on with {L} {time}?",
		"What did I tell you about {L} {time}?",
		"How was {L} doing {time}?",
	}
	generalTimeFrames = []string{
		"What did we talk about {time}?",
		"What was on my mind {time}?",
		"What did I bring up {time}?",
	}
)

// datedQuestions asks about some of the facts by the time of the session
// that states them: every fact of a session held in the last weeks, and
// a share of the others. seen holds the account's questions so far, in
// lower case, and takes the new ones.
func datedQuestions(rng *rand.Rand, f *Facilitator, facts []*fact, sessionOf map[*fact]string, seen map[string]bool) []Question {
	var out []Question
	for _, ft := range facts {
		s := f.session(sessionOf[ft])
		if s.Ago == "" && rng.Float64() >= datedShare {
			continue
		}
		fl := &filler{rng: rng, vars: ft.filler.vars, drawn: ft.filler.drawn}
		for range 10 {
			when := s.Ago
			if when == "" {
				when = timePhrase(rng, s.At)
			}
			var text string
			switch r := rng.IntN(10); {
			case r < 4:
				a := textgen.Pick(rng, ft.tmpl.asks)
				text = strings.TrimSuffix(fl.fill(a.text), "?") + " " + when + "?"
			case r < 7:
				text = strings.ReplaceAll(textgen.Pick(rng, aboutTimeFrames), "{about}", ft.about)
				text = strings.ReplaceAll(text, "{time}", when)
			case ft.learner != nil:
				text = strings.ReplaceAll(textgen.Pick(rng, learnerTimeFrames), "{time}", when)
				text = strings.ReplaceAll(text, "{L}", ft.learner.Name)
			default:
				text = strings.ReplaceAll(textgen.Pick(rng, generalTimeFrames), "{time}", when)
			}
			text = casual(rng, sentence(text))
			// Like every question, it must not copy the fact it asks about.
			if key := strings.ToLower(text); !seen[key] && sharedRun(text, ft.statement, 5) == "" {
				seen[key] = true
				out = append(out, Question{Facilitator: f.Key, Text: text, Kind: KindDated,
					SessionID: s.ID, Evidence: ft.statement})
				break
			}
		}
	}
	return out
}

var ordinals = map[int]string{1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}

// timePhrase names the time of a session held at at as people write it: its
// day most often, or its month, its season or its year.
func timePhrase(rng *rand.Rand, at time.Time) string {
	day, month, year := at.Day(), at.Month(), at.Year()
	suffix := ordinals[day]
	if suffix == "" {
		suffix = "th"
	}
	switch r := rng.IntN(20); {
	case r < 10:
		return textgen.Pick(rng, []string{
			fmt.Sprintf("on %d %s %d", day, month, year),
			fmt.Sprintf("on %s %d, %d", month, day, year),
			fmt.Sprintf("on %s %d%s, %d", month, day, suffix, year),
			fmt.Sprintf("on %s %d %d", month.String()[:3], day, year),
			fmt.Sprintf("on the %d%s of %s %d", day, suffix, month, year),
		})
	case r < 16:
		return textgen.Pick(rng, []string{"in", "back in", "during"}) + fmt.Sprintf(" %s %d", month, year)
	case r < 18 && month >= time.March && month <= time.November:
		season := [...]string{"spring", "summer", "autumn"}[(month-time.March)/3]
		return textgen.Pick(rng, []string{
			fmt.Sprintf("in the %s of %d", season, year),
			fmt.Sprintf("in %s %d", season, year),
		})
	}
	return fmt.Sprintf("in %d", year)
}
