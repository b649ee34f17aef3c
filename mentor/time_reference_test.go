package mentor

import (
	"strings"
	"testing"
	"time"
)

// A Thursday late in November.
var askedAt = time.Date(2026, time.November, 26, 10, 0, 0, 0, time.UTC)

func date(year int, month time.Month, day int) time.Time {
	return time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
}

// span is the window a question names before it is widened to every time
// zone's reading of it.
func span(start, end time.Time) *TimeWindow { return &TimeWindow{Start: start, End: end} }

// inEveryZone is w widened to every time zone's reading of it: from its
// start in the earliest zone (UTC+14) to its end in the latest (UTC-12).
func inEveryZone(w *TimeWindow) *TimeWindow {
	return &TimeWindow{Start: w.Start.Add(-14 * time.Hour), End: w.End.Add(12 * time.Hour)}
}

func days(year int, month time.Month, day, n int) *TimeWindow {
	return span(date(year, month, day), date(year, month, day+n))
}

func month(year int, m time.Month) *TimeWindow {
	return span(date(year, m, 1), date(year, m+1, 1))
}

func TestQuestionsNameTheirTime(t *testing.T) {
	for _, tc := range []struct {
		question string
		want     *TimeWindow
		text     string
	}{
		// Days, written every way people write them. A month's or a
		// season's name stays a word to search by.
		{"What was Sam doing on December 4, 2023?", days(2023, time.December, 4, 1), "What was Sam doing December?"},
		{"What was Sam doing on 4 December 2023?", days(2023, time.December, 4, 1), "What was Sam doing December?"},
		{"what was sam doing on the 4th of december, 2023", days(2023, time.December, 4, 1), "what was sam doing december"},
		{"Sam on Dec. 4th 2023", days(2023, time.December, 4, 1), "Sam"},
		{"Sam on 2023-12-04", days(2023, time.December, 4, 1), "Sam"},
		{"Sam on 12/25/2023", days(2023, time.December, 25, 1), "Sam"},
		{"Sam on 25.12.2023", days(2023, time.December, 25, 1), "Sam"},
		{"Sam on 5/5/2023", days(2023, time.May, 5, 1), "Sam"},
		// Without a year: the latest such day that has begun.
		{"the recital on March 3rd", days(2026, time.March, 3, 1), "the recital March"},
		{"the party on the 24th of December", days(2025, time.December, 24, 1), "the party December"},
		// Months.
		{"Which city was Calvin visiting in August 2023?", month(2023, time.August), "Which city was Calvin visiting August?"},
		{"back in Sept 2022 Emma said", month(2022, time.September), "Emma said"},
		{"what came up in August", month(2026, time.August), "what came up August"},
		{"what came up in December", month(2025, time.December), "what came up December"},
		{"what came up in November", month(2026, time.November), "what came up November"},
		{"what came up last November", month(2025, time.November), "what came up November"},
		{"what came up in early May", month(2026, time.May), "what came up May"},
		{"what came up in mid-March", month(2026, time.March), "what came up March"},
		// Seasons, the northern hemisphere's.
		{"What did we try last spring?", span(date(2026, time.March, 1), date(2026, time.June, 1)), "What did we try spring?"},
		{"What did we try last winter?", span(date(2025, time.December, 1), date(2026, time.March, 1)), "What did we try winter?"},
		{"plans this winter", span(date(2026, time.December, 1), date(2027, time.March, 1)), "plans winter"},
		{"in the summer of 2023", span(date(2023, time.June, 1), date(2023, time.September, 1)), "summer"},
		{"Zoe in fall 2022", span(date(2022, time.September, 1), date(2022, time.December, 1)), "Zoe fall"},
		{"the garden in the summer", span(date(2026, time.June, 1), date(2026, time.September, 1)), "the garden summer"},
		// Years.
		{"What did Max do in 2022?", span(date(2022, time.January, 1), date(2023, time.January, 1)), "What did Max do ?"},
		// Relative to now.
		{"what did i bring up yesterday", days(2026, time.November, 25, 1), "what did i bring up"},
		{"the day before yesterday", days(2026, time.November, 24, 1), ""},
		{"What did we say today?", days(2026, time.November, 26, 1), "What did we say ?"},
		{"Noah two days ago", days(2026, time.November, 24, 1), "Noah"},
		{"Noah 3 days ago", days(2026, time.November, 23, 1), "Noah"},
		{"Noah a few days ago", days(2026, time.November, 22, 3), "Noah"},
		{"Noah a week ago", days(2026, time.November, 16, 7), "Noah"},
		{"Noah 3 weeks ago", days(2026, time.November, 2, 7), "Noah"},
		{"Noah a couple of weeks ago", span(date(2026, time.November, 2), date(2026, time.November, 23)), "Noah"},
		{"Noah two months ago", month(2026, time.September), "Noah"},
		{"Noah a year ago", span(date(2025, time.January, 1), date(2026, time.January, 1)), "Noah"},
		{"What did we talk about last week?", days(2026, time.November, 16, 7), "What did we talk about ?"},
		{"What did we talk about LAST WEEK?", days(2026, time.November, 16, 7), "What did we talk about ?"},
		{"What did we talk about the past week?", span(date(2026, time.November, 19), askedAt), "What did we talk about ?"},
		{"What did we talk about this week?", span(date(2026, time.November, 23), askedAt), "What did we talk about ?"},
		{"earlier this year", span(date(2026, time.January, 1), askedAt), ""},
		{"Emma last month", month(2026, time.October), "Emma"},
		{"Emma last year", span(date(2025, time.January, 1), date(2026, time.January, 1)), "Emma"},
		{"Emma over the past few days", span(date(2026, time.November, 22), askedAt), "Emma over"},
		{"Emma last Tuesday", days(2026, time.November, 24, 1), "Emma"},
		{"Emma last Thursday", days(2026, time.November, 19, 1), "Emma"},
		{"Emma the other day", span(date(2026, time.November, 19), date(2026, time.November, 26)), "Emma"},
		{"What did Emma say last night?", days(2026, time.November, 25, 2), "What did Emma say ?"},
		{"Emma last weekend", days(2026, time.November, 21, 2), "Emma"},
		{"Emma this past weekend", days(2026, time.November, 21, 2), "Emma"},
		// Since a month or a year, up to now.
		{"How has Emma been since March?", span(date(2026, time.March, 1), askedAt), "How has Emma been March?"},
		{"Emma since December", span(date(2025, time.December, 1), askedAt), "Emma December"},
		{"Emma since August 2025", span(date(2025, time.August, 1), askedAt), "Emma August"},
		{"Emma since 2024", span(date(2024, time.January, 1), askedAt), "Emma"},
		{"What has Emma been reading lately?", span(date(2026, time.October, 27), askedAt), "What has Emma been reading ?"},
		// The first time named counts; the others stay words.
		{"last week we talked about the trip in August", days(2026, time.November, 16, 7), "we talked about the trip in August"},
	} {
		got := ReadTimeReference(tc.question, askedAt)
		want := inEveryZone(tc.want)
		if got.Window == nil || !got.Window.Start.Equal(want.Start) || !got.Window.End.Equal(want.End) || got.Text != tc.text {
			t.Errorf("%q: got %v %q, want %s – %s %q", tc.question, got.Window, got.Text, want.Start, want.End, tc.text)
		}
	}
}

// What is not a time, or not one time, names none: a weekday alone (a
// routine as often as a day gone by), a "when" question, words that only
// look like dates, and days that do not exist. A day in numbers that reads
// two ways names no window, but its numbers are no words to search by.
func TestQuestionsThatNameNoTime(t *testing.T) {
	for question, text := range map[string]string{
		"When did Evan meet his future wife?":           "When did Evan meet his future wife?",
		"What do we do about the game on Friday?":       "What do we do about the game on Friday?",
		"This may help with long division":              "This may help with long division",
		"Emma may be ready for chapter books":           "Emma may be ready for chapter books",
		"Did she fall at recess?":                       "Did she fall at recess?",
		"Read 2022 words a day":                         "Read 2022 words a day",
		"The battle in 1066":                            "The battle in 1066",
		"Her birthday is February 30, 2023":             "Her birthday is February 30, 2023",
		"What did we decide on 13/13/2023":              "What did we decide on 13/13/2023",
		"What did we decide on 4/12/2023":               "What did we decide",
		"How many weeks of practice before the recital": "How many weeks of practice before the recital",
		"Emma's weekend plans":                          "Emma's weekend plans",
		"Every night since 1066":                        "Every night since 1066",
		"Since when does Emma read?":                    "Since when does Emma read?",
	} {
		got := ReadTimeReference(question, askedAt)
		if got.Window != nil || got.Text != text {
			t.Errorf("%q: got %v %q, want no window and %q", question, got.Window, got.Text, text)
		}
	}
}

// A window is the day, month or year as anyone names it, wherever they
// are: the evening of 4 December in Denver (UTC-7) is already the 5th in
// UTC, and the morning of the 4th in Auckland (UTC+13) still the 3rd.
func TestADayIsEveryTimeZonesDay(t *testing.T) {
	w := ReadTimeReference("on 4 December 2023", askedAt).Window
	for _, at := range []time.Time{
		time.Date(2023, time.December, 4, 21, 0, 0, 0, time.FixedZone("Denver", -7*3600)),
		time.Date(2023, time.December, 4, 8, 0, 0, 0, time.FixedZone("Auckland", 13*3600)),
	} {
		if at.Before(w.Start) || !at.Before(w.End) {
			t.Errorf("%s is outside %s – %s", at, w.Start, w.End)
		}
	}
	if day := time.Date(2023, time.December, 6, 0, 0, 0, 0, time.UTC); day.Before(w.End) {
		t.Errorf("the 6th is inside the window of the 4th, which ends %s", w.End)
	}
}

// The same words mean another time when asked on another day: "now" is
// the caller's.
func TestRelativeTimesFollowNow(t *testing.T) {
	january := time.Date(2027, time.January, 15, 9, 0, 0, 0, time.UTC)
	for question, want := range map[string]*TimeWindow{
		"this winter":  span(date(2026, time.December, 1), date(2027, time.March, 1)),
		"last winter":  span(date(2025, time.December, 1), date(2026, time.March, 1)),
		"in December":  month(2026, time.December),
		"last week":    days(2027, time.January, 4, 7),
		"last month":   month(2026, time.December),
		"yesterday":    days(2027, time.January, 14, 1),
		"3 months ago": month(2026, time.October),
	} {
		got, want := ReadTimeReference(question, january).Window, inEveryZone(want)
		if got == nil || !got.Start.Equal(want.Start) || !got.End.Equal(want.End) {
			t.Errorf("%q asked on %s: got %v, want %s – %s", question, january, got, want.Start, want.End)
		}
	}
}

// Whatever a question says, reading its time never fails: a window begins
// before it ends, and what is left to search by is the question's own
// words, never more of them.
func FuzzReadTimeReference(f *testing.F) {
	for _, seed := range []string{"on 4 December 2023", "in August", "3 weeks ago", "4/12/2023",
		"the day before yesterday", "last spring and last week", "999 years ago", "this may"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, question string) {
		got := ReadTimeReference(question, askedAt)
		if got.Window != nil && !got.Window.Start.Before(got.Window.End) {
			t.Fatalf("%q: window %s – %s ends before it begins", question, got.Window.Start, got.Window.End)
		}
		if len(strings.Fields(got.Text)) > len(strings.Fields(question)) {
			t.Fatalf("%q: left %q to search by", question, got.Text)
		}
	})
}

// The patterns run only over the windows around clue words; whatever the
// text, they find the time that running every pattern over the whole of it
// finds.
func FuzzWindowsFindWhatTheWholeTextNames(f *testing.F) {
	for _, seed := range []string{"on 4 December 2023", "in August", "3 weeks ago", "4/12/2023", "since 2021",
		"the day before yesterday", "last spring and last week", "999 years ago", "this may", "last_week",
		"Max broke his wrist last week on the trampoline, and this morning the cast came off.",
		"We talked about the recital a lot, and it went better than last time; on the 4th of December, 2023 she played.",
		strings.Repeat("this and that, the other thing, ", 30) + "a couple of weeks ago",
		"Emma (2023-12-04) said: back in early-May we moved; since March 2024 it is better."} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, gotOK := firstTimeNamed(text, askedAt)
		lower := lowerASCII(text)
		want, wantOK := firstTimeIn(lower, clueWindow{start: 0, end: len(lower), clues: ^timeClue(0)}, askedAt)
		if gotOK != wantOK || got.start != want.start || got.end != want.end ||
			(got.window == nil) != (want.window == nil) || got.window != nil && *got.window != *want.window {
			t.Fatalf("%q: windows found %v %+v, the whole text %v %+v", text, gotOK, got, wantOK, want)
		}
	})
}

// BenchmarkReadTimeReference times reading a question's time, which every
// search does first: one that names none, as most do, and one that names
// a day.
//
//	go test ./mentor -run '^$' -bench ReadTimeReference
func BenchmarkReadTimeReference(b *testing.B) {
	for name, question := range map[string]string{
		"no time": "anxiety before the math test",
		"a day":   "What was Sam doing at the aquarium on December 4, 2023?",
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				ReadTimeReference(question, askedAt)
			}
		})
	}
}
