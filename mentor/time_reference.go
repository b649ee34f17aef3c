package mentor

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// TimeWindow is a span of time a question names: from Start up to, not
// including, End.
type TimeWindow struct {
	Start, End time.Time
}

// TimeReference is what a search question says of when the conversation
// it looks for took place: the window of time it names (nil when it names
// none) and its words without those that name the time, which are what is
// left to search by.
type TimeReference struct {
	Window *TimeWindow
	Text   string
}

// ReadTimeReference reads the time a search question names, now being the
// time it is asked:
//
//   - a day: "on 4 December 2023", "December 4th, 2023", "2023-12-04",
//     "on the 4th of December" (without a year, the latest one that has
//     begun); a day written with numbers alone that reads two ways
//     ("4/12/2023") names none;
//   - a month, a season or a year: "in August 2023", "back in August",
//     "last May", "in the summer of 2022", "last spring", "this fall",
//     "in 2022" (seasons are the northern hemisphere's, by whole months:
//     spring is March to May, and winter begins in December);
//   - a time relative to now: "yesterday", "last night", "today", "two
//     days ago", "3 weeks ago", "a few months ago", "last week" (the
//     calendar week, Monday to Sunday, before this one), "last weekend"
//     (that week's Saturday and Sunday), "the past week" (the last seven
//     days), "this month", "last year", "last Tuesday", "the other day",
//     "recently";
//   - a time up to now: "since March", "since 2021".
//
// The first time named counts. Days are UTC's, and every window is widened
// to what the same words mean in any time zone (from UTC-12 to UTC+14), so
// the evening of 4 December in Denver, already the 5th in UTC, is still
// the 4th. A weekday alone ("on Friday") names no time: it is as often a
// routine or a plan as a day gone by. The words naming the time leave the
// text, the prepositions with them, but for the names of months and
// seasons, which a conversation about the December recital or the summer
// camp says too: a date's numbers would only match other numbers, and
// "week" or "ago" every conversation.
func ReadTimeReference(question string, now time.Time) TimeReference {
	named, ok := firstTimeNamed(question, now)
	if !ok {
		return TimeReference{Text: question}
	}
	var kept []string
	for _, k := range keptTimeWords.FindAllStringIndex(question[named.start:named.end], -1) {
		kept = append(kept, question[named.start+k[0]:named.start+k[1]])
	}
	// The kept words stand apart from what was around the time's words
	// only where a space did, so that no word of the question is split in
	// two ("0!last spring!0" stays one word).
	before, after := "", ""
	if named.start > 0 && unicode.IsSpace(rune(question[named.start-1])) {
		before = " "
	}
	if named.end < len(question) && unicode.IsSpace(rune(question[named.end])) {
		after = " "
	}
	text := strings.Join(strings.Fields(question[:named.start]+before+strings.Join(kept, " ")+after+question[named.end:]), " ")
	window := named.window
	if window != nil {
		widened := TimeWindow{Start: window.Start.Add(-14 * time.Hour), End: window.End.Add(12 * time.Hour)}
		window = &widened
	}
	return TimeReference{Window: window, Text: text}
}

// timeNamed is where text names a time, text[start:end], and its window
// (nil for a time that reads two ways).
type timeNamed struct {
	start, end int
	window     *TimeWindow
}

// firstTimeNamed finds the first time text names, now being when it was
// written; false when it names none.
func firstTimeNamed(text string, now time.Time) (timeNamed, bool) {
	lower := lowerASCII(text)
	// The windows come in order and do not overlap, so the first that
	// names a time holds the first time named.
	for _, w := range clueWindows(lower) {
		if named, ok := firstTimeIn(lower, w, now.UTC()); ok {
			return named, true
		}
	}
	return timeNamed{}, false
}

// lowerASCII is text in lower case, letter for letter, so that a match's
// place in it is the same in the text.
func lowerASCII(text string) []byte {
	lower := []byte(text)
	for i, c := range lower {
		if c >= 'A' && c <= 'Z' {
			lower[i] = c + 'a' - 'A'
		}
	}
	return lower
}

// firstTimeIn finds the first time named in the window w of lower, by the
// patterns whose clues it holds.
func firstTimeIn(lower []byte, w clueWindow, now time.Time) (timeNamed, bool) {
	var best timeNamed
	found := false
	for _, p := range timePatterns {
		if p.needs&w.clues != p.needs {
			continue
		}
		for _, m := range p.re.FindAllSubmatchIndex(lower[w.start:w.end], -1) {
			for i := range m {
				if m[i] >= 0 {
					m[i] += w.start
				}
			}
			if found && (m[0] > best.start || m[0] == best.start && m[1] <= best.end) {
				continue
			}
			groups := make([]string, len(m)/2)
			for i := range groups {
				if m[2*i] >= 0 {
					groups[i] = string(lower[m[2*i]:m[2*i+1]])
				}
			}
			window, ok := p.resolve(groups, now)
			if !ok {
				continue
			}
			best, found = timeNamed{start: m[0], end: m[1], window: window}, true
		}
	}
	return best, found
}

// A timeClue is a kind of word that some way of naming a time needs: a
// text without the clues a pattern needs is not matched against it. Most
// texts have few, and each pattern costs microseconds, so the kinds are
// narrow: "at night" runs the one pattern that reads "last night", not
// every pattern of a time relative to now.
type timeClue uint32

const (
	clueNumber timeClue = 1 << iota
	clueMonth
	clueSeason
	clueWeekday
	clueYesterday
	clueToday
	clueNight
	clueWeekend
	clueDay
	clueUnit
	clueAgo
	clueFew
	clueLast
	clueOther
	clueRecent
	clueSince
)

// timeWords are the words that are clues, and of which kind.
var timeWords = func() map[string]timeClue {
	words := map[string]timeClue{}
	for clue, list := range map[timeClue]string{
		clueMonth: `january february march april may june july august september october november december
			jan feb mar apr jun jul aug sep sept oct nov dec`,
		clueSeason:    `spring summer autumn fall winter`,
		clueWeekday:   `monday tuesday wednesday thursday friday saturday sunday`,
		clueYesterday: `yesterday`,
		clueToday:     `today tonight morning afternoon evening`,
		clueNight:     `night`,
		clueWeekend:   `weekend`,
		clueDay:       `day days`,
		clueUnit:      `week weeks month months year years`,
		clueAgo:       `ago`,
		clueFew:       `few couple`,
		clueLast:      `last previous past this`,
		clueOther:     `other`,
		clueRecent:    `recently lately`,
		clueSince:     `since`,
	} {
		for _, w := range strings.Fields(list) {
			if len(w) < 3 || len(w) > 9 {
				panic("mentor: clueWindows reads clue words of three to nine letters, not " + w)
			}
			words[w] = clue
		}
	}
	return words
}()

// A clueWindow is a stretch of text, lower[start:end], around words that
// are clues, and the clues it holds. The patterns run only over the
// windows: a regular expression costs time for every byte it reads, and a
// turn of a conversation can be a few thousand bytes with one clue in it.
type clueWindow struct {
	start, end int
	clues      timeClue
}

// clueReach is how many words on either side of a clue a window takes in:
// more than any way of naming a time holds around its clue ("on the 4th
// of December, 2023", "a couple of weeks ago").
const clueReach = 6

// clueWindows finds the windows of lower (lower case, in ASCII at least),
// in order, merged where they overlap. A window begins where a word does
// and ends where the next one begins, a word being a run of the
// characters \b counts as a word's (ASCII letters, digits and _), so
// that \b matches at its start just where it matches in the whole text.
// A word's clues are those of its runs of letters (timeWords) and of its
// digits. It reads the text once and keeps no list of its words: the
// starts of the last few are enough to begin a window clueReach words
// back.
func clueWindows(lower []byte) []clueWindow {
	var windows []clueWindow
	var starts [clueReach + 1]int // of the last words, word n at n % len
	words, reach := 0, 0          // words read; words the last window still takes in
	lastEnd := -1                 // where the last word read ends
	for i := 0; i < len(lower); {
		if !isWordByte(lower[i]) {
			i++
			continue
		}
		// A window that took in the last word takes in what follows it up
		// to this one too: a pattern may end in punctuation ("Dec.").
		if n := len(windows); n > 0 && windows[n-1].end == lastEnd {
			windows[n-1].end = i
		}
		start, letters := i, -1
		var clues timeClue
		for ; i <= len(lower); i++ {
			var c byte
			if i < len(lower) {
				c = lower[i]
			}
			if c >= 'a' && c <= 'z' {
				if letters < 0 {
					letters = i
				}
				continue
			}
			// Every clue word has three to nine letters.
			if letters >= 0 && i-letters >= 3 && i-letters <= 9 {
				clues |= timeWords[string(lower[letters:i])]
			}
			letters = -1
			if c >= '0' && c <= '9' {
				clues |= clueNumber
			}
			if i == len(lower) || !isWordByte(c) {
				break
			}
		}
		starts[words%len(starts)] = start
		words++
		n := len(windows)
		switch {
		case clues != 0:
			from := starts[max(words-1-clueReach, 0)%len(starts)]
			if n > 0 && from < windows[n-1].end {
				windows[n-1].end, windows[n-1].clues = i, windows[n-1].clues|clues
			} else {
				windows = append(windows, clueWindow{start: from, end: i, clues: clues})
			}
			reach = clueReach
		case reach > 0:
			windows[n-1].end = i
			reach--
		}
		lastEnd = i
	}
	if n := len(windows); n > 0 && windows[n-1].end == lastEnd {
		windows[n-1].end = len(lower)
	}
	return windows
}

// isWordByte reports whether \b counts c as a word's character.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// keptTimeWords are the words of a time named that stay words to search
// by: a conversation about the summer camp or the December recital says
// them too.
var keptTimeWords = regexp.MustCompile(`(?i)\b(january|february|march|april|may|june|july|august|september|` +
	`october|november|december|spring|summer|autumn|fall|winter)\b`)

// A timePattern finds one way of naming a time; resolve gives the window
// its submatches (lower case, the whole match first) name at now, nil for
// a time that reads two ways, and false when the match names no time
// after all (the 30th of February, the year 1066).
type timePattern struct {
	needs   timeClue
	re      *regexp.Regexp
	resolve func(m []string, now time.Time) (*TimeWindow, bool)
}

// The parts patterns are made of, in lower case. A month is any word of
// its length, which monthOf then reads: a pattern with the twelve names
// and their abbreviations in it took several times as long to match.
const (
	monthWords  = `([a-z]{3,9})\b\.?`
	dayNumber   = `(\d{1,2})(?:st|nd|rd|th)?\b`
	yearNumber  = `(\d{4})\b`
	seasonWords = `(spring|summer|autumn|fall|winter)\b`
	dayOn       = `(?:on\s+)?`
	inOrDuring  = `(?:(?:back\s+)?in\s+|during\s+)?`
	counted     = `(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|` +
		`(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|several)`
	weekdayWords = `(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`
)

func pattern(needs timeClue, re string, resolve func(m []string, now time.Time) (*TimeWindow, bool)) timePattern {
	return timePattern{needs: needs, re: regexp.MustCompile(`\b` + re), resolve: resolve}
}

var timePatterns = []timePattern{
	// Days.
	pattern(clueNumber, dayOn+`(\d{4})-(\d{2})-(\d{2})\b`, func(m []string, now time.Time) (*TimeWindow, bool) {
		return dayWindow(atoi(m[1]), time.Month(atoi(m[2])), atoi(m[3]), now)
	}),
	pattern(clueNumber, dayOn+`(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b`, numericDay),
	pattern(clueNumber|clueMonth, dayOn+`(?:the\s+)?`+dayNumber+`(?:\s+of)?\s+`+monthWords+`(?:,?\s+`+yearNumber+`)?`,
		func(m []string, now time.Time) (*TimeWindow, bool) {
			return namedDay(m[3], monthOf(m[2]), atoi(m[1]), now)
		}),
	pattern(clueNumber|clueMonth, dayOn+monthWords+`\s+(?:the\s+)?`+dayNumber+`(?:,?\s+`+yearNumber+`)?`,
		func(m []string, now time.Time) (*TimeWindow, bool) {
			return namedDay(m[3], monthOf(m[1]), atoi(m[2]), now)
		}),

	// Months, seasons, years.
	pattern(clueNumber|clueMonth, inOrDuring+monthWords+`,?\s+(?:of\s+)?`+yearNumber,
		func(m []string, now time.Time) (*TimeWindow, bool) {
			year, month := atoi(m[2]), monthOf(m[1])
			if !plausibleYear(year, now) || month == 0 {
				return nil, false
			}
			return monthWindow(year, month), true
		}),
	pattern(clueMonth, `(?:((?:back\s+)?in|during|last|this)\s+(?:(?:early|late|mid)[\s-]+)?|(?:early|late|mid)[\s-]+)(?:of\s+)?`+monthWords,
		namedMonth),
	pattern(clueNumber|clueSeason, inOrDuring+`(?:the\s+)?`+seasonWords+`\s+(?:of\s+)?`+yearNumber,
		func(m []string, now time.Time) (*TimeWindow, bool) {
			year := atoi(m[2])
			if !plausibleYear(year, now) {
				return nil, false
			}
			return seasonWindow(m[1], year), true
		}),
	pattern(clueSeason|clueLast, inOrDuring+`(last|this|past)\s+`+seasonWords, func(m []string, now time.Time) (*TimeWindow, bool) {
		return recentSeason(m[2], m[1], now), true
	}),
	pattern(clueSeason, `(?:in|during)\s+(?:the\s+)?`+seasonWords, func(m []string, now time.Time) (*TimeWindow, bool) {
		return recentSeason(m[1], "in", now), true
	}),
	pattern(clueNumber, `(?:(?:back\s+)?in|during)\s+`+yearNumber, func(m []string, now time.Time) (*TimeWindow, bool) {
		year := atoi(m[1])
		if !plausibleYear(year, now) {
			return nil, false
		}
		return yearWindow(year), true
	}),
	// From a month or a year up to now.
	pattern(clueSince|clueMonth, `since\s+`+monthWords+`(?:,?\s+`+yearNumber+`)?`, func(m []string, now time.Time) (*TimeWindow, bool) {
		var from *TimeWindow
		if m[2] != "" {
			year, month := atoi(m[2]), monthOf(m[1])
			if !plausibleYear(year, now) || month == 0 {
				return nil, false
			}
			from = monthWindow(year, month)
		} else if w, ok := namedMonth([]string{m[0], "in", m[1]}, now); ok {
			from = w // the latest such month that has begun, as "in March" reads
		} else {
			return nil, false
		}
		return &TimeWindow{Start: from.Start, End: now}, from.Start.Before(now)
	}),
	pattern(clueSince|clueNumber, `since\s+`+yearNumber, func(m []string, now time.Time) (*TimeWindow, bool) {
		year := atoi(m[1])
		start := yearWindow(year).Start
		if !plausibleYear(year, now) || !start.Before(now) {
			return nil, false
		}
		return &TimeWindow{Start: start, End: now}, true
	}),

	// Times relative to now.
	pattern(clueDay|clueYesterday, `(?:the\s+)?day\s+before\s+yesterday\b`, func(m []string, now time.Time) (*TimeWindow, bool) {
		return daysBack(now, 2, 2), true
	}),
	pattern(clueYesterday, `yesterday\b`, func(m []string, now time.Time) (*TimeWindow, bool) { return daysBack(now, 1, 1), true }),
	pattern(clueToday, `(?:(?:earlier\s+)?today|this\s+(?:morning|afternoon|evening)|tonight)\b`,
		func(m []string, now time.Time) (*TimeWindow, bool) { return daysBack(now, 0, 0), true }),
	// The evening before and the small hours of today.
	pattern(clueLast|clueNight, `last\s+night\b`, func(m []string, now time.Time) (*TimeWindow, bool) { return daysBack(now, 1, 0), true }),
	// The Saturday and Sunday before this calendar week.
	pattern(clueLast|clueWeekend, `(?:last|this\s+past)\s+weekend\b`, func(m []string, now time.Time) (*TimeWindow, bool) {
		today := startOfDay(now)
		monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
		return &TimeWindow{Start: monday.AddDate(0, 0, -2), End: monday}, true
	}),
	pattern(clueAgo, counted+`\s+(day|week|month|year)s?\s+ago\b`, func(m []string, now time.Time) (*TimeWindow, bool) {
		n, spread, ok := count(m[1])
		if !ok {
			return nil, false
		}
		return unitsAgo(m[2], n, spread, now), true
	}),
	pattern(clueLast|clueFew, `(?:the\s+)?(?:past|last)\s+(few|couple(?:\s+of)?)\s+(day|week|month)s\b`,
		func(m []string, now time.Time) (*TimeWindow, bool) {
			n, _, _ := count(m[1])
			return rolling(m[2], n+1, now), true
		}),
	pattern(clueLast|clueUnit, `(the\s+)?(?:(last|previous|past)|(?:earlier\s+)?(this))\s+(week|month|year)\b`, namedUnit),
	pattern(clueLast|clueWeekday, `(?:last|this\s+past)\s+`+weekdayWords, func(m []string, now time.Time) (*TimeWindow, bool) {
		today := startOfDay(now)
		back := (int(today.Weekday()) - int(weekdayOf(m[1])) + 7) % 7
		if back == 0 {
			back = 7
		}
		return daysBack(now, back, back), true
	}),
	pattern(clueOther|clueDay, `the\s+other\s+day\b`, func(m []string, now time.Time) (*TimeWindow, bool) { return daysBack(now, 7, 1), true }),
	pattern(clueRecent, `(?:recently|lately)\b`, func(m []string, now time.Time) (*TimeWindow, bool) {
		return &TimeWindow{Start: startOfDay(now).AddDate(0, 0, -30), End: now}, true
	}),
}

// numericDay reads a day written with numbers alone, day and month in
// either order: one that reads two ways names no window.
func numericDay(m []string, now time.Time) (*TimeWindow, bool) {
	a, b, year := atoi(m[1]), atoi(m[2]), atoi(m[3])
	monthFirst, monthFirstOK := dayWindow(year, time.Month(a), b, now)
	dayFirst, dayFirstOK := dayWindow(year, time.Month(b), a, now)
	switch {
	case monthFirstOK && dayFirstOK && a != b:
		return nil, true
	case monthFirstOK:
		return monthFirst, true
	case dayFirstOK:
		return dayFirst, true
	}
	return nil, false
}

// namedMonth reads a month named without its year ("in August", "last
// May"): the latest one that has begun, or for "last", the latest before
// this month. "This may" is no month: "this may help".
func namedMonth(m []string, now time.Time) (*TimeWindow, bool) {
	word, month := m[1], monthOf(m[2])
	if month == 0 || month == time.May && m[0] == "this may" {
		return nil, false
	}
	year := now.Year()
	if month > now.Month() || word == "last" && month == now.Month() {
		year--
	}
	return monthWindow(year, month), true
}

// namedUnit reads "last week", "this month", "the past year" and the like:
// last (or previous) is the calendar week, month or year before this one,
// this is the one going on, and the past (or the last) is as long a time
// up to now.
func namedUnit(m []string, now time.Time) (*TimeWindow, bool) {
	withThe, which, this, unit := m[1] != "", m[2], m[3] != "", m[4]
	today := startOfDay(now)
	var start time.Time
	switch unit {
	case "week":
		start = today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
	case "month":
		start = time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	default:
		start = time.Date(today.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
	}
	switch {
	case this:
		return &TimeWindow{Start: start, End: now}, true
	case which != "past" && !withThe:
		return &TimeWindow{Start: addUnits(start, unit, -1), End: start}, true
	}
	return rolling(unit, 1, now), true
}

// unitsAgo is the window "n units ago" names, widened by spread units on
// either side for a vague count ("a few"): that day; the week around that
// day; that calendar month or year.
func unitsAgo(unit string, n, spread int, now time.Time) *TimeWindow {
	today := startOfDay(now)
	switch unit {
	case "day":
		return daysBack(now, n+spread, n-spread)
	case "week":
		return &TimeWindow{Start: today.AddDate(0, 0, -7*(n+spread)-3), End: today.AddDate(0, 0, -7*(n-spread)+4)}
	case "month":
		this := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
		return &TimeWindow{Start: this.AddDate(0, -(n + spread), 0), End: this.AddDate(0, -(n-spread)+1, 0)}
	}
	this := time.Date(today.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
	return &TimeWindow{Start: this.AddDate(-(n + spread), 0, 0), End: this.AddDate(-(n-spread)+1, 0, 0)}
}

// rolling is the last n units up to now.
func rolling(unit string, n int, now time.Time) *TimeWindow {
	return &TimeWindow{Start: addUnits(startOfDay(now), unit, -n), End: now}
}

func addUnits(t time.Time, unit string, n int) time.Time {
	switch unit {
	case "day":
		return t.AddDate(0, 0, n)
	case "week":
		return t.AddDate(0, 0, 7*n)
	case "month":
		return t.AddDate(0, n, 0)
	}
	return t.AddDate(n, 0, 0)
}

// daysBack is the days from `from` days before today to `to` days before
// it, both included.
func daysBack(now time.Time, from, to int) *TimeWindow {
	today := startOfDay(now)
	return &TimeWindow{Start: today.AddDate(0, 0, -from), End: today.AddDate(0, 0, 1-to)}
}

// dayWindow is one calendar day; false when there is no such day.
func dayWindow(year int, month time.Month, day int, now time.Time) (*TimeWindow, bool) {
	start := time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
	if month < time.January || month > time.December || start.Day() != day || start.Month() != month ||
		!plausibleYear(year, now) {
		return nil, false
	}
	return &TimeWindow{Start: start, End: start.AddDate(0, 0, 1)}, true
}

// namedDay is the day of that month and number, in the year named (""
// for none: the latest such day that has begun).
func namedDay(year string, month time.Month, day int, now time.Time) (*TimeWindow, bool) {
	if year != "" {
		return dayWindow(atoi(year), month, day, now)
	}
	return latestDay(month, day, now)
}

// latestDay is the latest day of that month and number that has begun.
func latestDay(month time.Month, day int, now time.Time) (*TimeWindow, bool) {
	year := now.Year()
	if w, ok := dayWindow(year, month, day, now); ok && !w.Start.After(now) {
		return w, true
	}
	return dayWindow(year-1, month, day, now)
}

func monthWindow(year int, month time.Month) *TimeWindow {
	start := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
	return &TimeWindow{Start: start, End: start.AddDate(0, 1, 0)}
}

func yearWindow(year int) *TimeWindow {
	start := time.Date(year, time.January, 1, 0, 0, 0, 0, time.UTC)
	return &TimeWindow{Start: start, End: start.AddDate(1, 0, 0)}
}

// seasonWindow is the season that begins in year.
func seasonWindow(season string, year int) *TimeWindow {
	first := map[string]time.Month{"spring": time.March, "summer": time.June, "autumn": time.September,
		"fall": time.September, "winter": time.December}[season]
	start := time.Date(year, first, 1, 0, 0, 0, 0, time.UTC)
	return &TimeWindow{Start: start, End: start.AddDate(0, 3, 0)}
}

// recentSeason is the season named without its year: "last spring" (or
// "past") is the latest one that is over, "in the fall" the latest one that
// has begun, and "this summer" the one going on, or else this year's,
// which may be still to come.
func recentSeason(season, which string, now time.Time) *TimeWindow {
	if which == "this" {
		if w := seasonWindow(season, now.Year()-1); w.End.After(now) {
			return w // a winter begun last December
		}
		return seasonWindow(season, now.Year())
	}
	for year := now.Year(); ; year-- {
		w := seasonWindow(season, year)
		if which == "in" && !w.Start.After(now) || !w.End.After(now) {
			return w
		}
	}
}

// plausibleYear reports whether year can be one a conversation was held
// in: from 1970 to next year.
func plausibleYear(year int, now time.Time) bool { return year >= 1970 && year <= now.Year()+1 }

func startOfDay(t time.Time) time.Time { return t.Truncate(24 * time.Hour) }

// count reads a count of days, weeks, months or years: a number, a number
// word, or a vague one ("a few"), which is counted one unit wider on
// either side.
func count(word string) (n, spread int, ok bool) {
	word = strings.Join(strings.Fields(word), " ")
	if n, err := strconv.Atoi(word); err == nil {
		return n, 0, n > 0
	}
	switch word {
	case "couple", "a couple", "couple of", "a couple of":
		return 2, 1, true
	case "few", "a few":
		return 3, 1, true
	case "several":
		return 4, 2, true
	}
	for i, w := range []string{"a", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"} {
		if word == w || word == "an" && w == "a" {
			return max(i, 1), 0, true
		}
	}
	return 0, 0, false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// monthOf is the month a word (or its abbreviation) names; 0 for none.
func monthOf(word string) time.Month {
	word = strings.TrimSuffix(word, ".")
	for m := time.January; m <= time.December; m++ {
		if name := strings.ToLower(m.String()); word == name || word == name[:3] || word == "sept" && m == time.September {
			return m
		}
	}
	return 0
}

func weekdayOf(word string) time.Weekday {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.ToLower(d.String()) == word {
			return d
		}
	}
	return 0
}
