package mentor_test

import (
	"strings"
	"testing"
	"time"

	"mentormemory/mentor"
)

// A model's words are used only when they fit: one line, not empty,
// within bounds, and no refusal; an unfit one leaves its template.
func TestOnlyFitClosingWordsAreKept(t *testing.T) {
	for _, c := range []struct {
		name string
		in   mentor.ClosingWords
		want mentor.ClosingWords
	}{
		{"fit", mentor.ClosingWords{Goodbye: " Well done today.\n", Summary: "They worked on\n\nfractions."},
			mentor.ClosingWords{Goodbye: "Well done today.", Summary: "They worked on fractions."}},
		{"empty", mentor.ClosingWords{Goodbye: "  ", Summary: ""}, mentor.ClosingWords{}},
		{"too long", mentor.ClosingWords{Goodbye: strings.Repeat("a", mentor.MaxGoodbyeChars+1), Summary: strings.Repeat("b ", mentor.MaxWrittenSummaryChars)},
			mentor.ClosingWords{}},
		{"refusal", mentor.ClosingWords{Goodbye: "I'm sorry, but I can't help with that.", Summary: "As an AI, I cannot summarise this."},
			mentor.ClosingWords{}},
	} {
		if got := c.in.Checked(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The model's goodbye replaces the template's at once; its summary, once
// the session has ended, follows the summary's day and length, and without
// one the template's summary stays.
func TestTheModelsWordsReplaceTheTemplates(t *testing.T) {
	start := time.Date(2026, 3, 2, 16, 0, 0, 0, time.UTC)
	end := start.Add(20 * time.Minute)
	closing := mentor.AdvanceClosing(mentor.ClosingState{SessionID: "s"}, []mentor.Turn{
		{Role: mentor.RoleUser, Content: "Emma solved it on her own!"}, {Role: mentor.RoleAssistant, Content: "Next time we'll try remainders."},
	}, "Emma")
	template := closing.GoodbyeLine
	words := mentor.ClosingWords{Goodbye: "What a day for Emma.", Summary: "Emma cracked long division."}

	live, summary := mentor.WithClosingWords(closing, start, nil, words)
	if live.GoodbyeLine != "What a day for Emma." || summary != nil {
		t.Fatalf("live: goodbye %q, summary %v", live.GoodbyeLine, summary)
	}
	ended, summary := mentor.WithClosingWords(closing, start, &end, words)
	if ended.GoodbyeLine != "What a day for Emma." || summary == nil || *summary != "Monday 2 March, 1 exchange over 20 minutes. Emma cracked long division." {
		t.Fatalf("ended: goodbye %q, summary %v", ended.GoodbyeLine, summary)
	}
	kept, summary := mentor.WithClosingWords(closing, start, &end, mentor.ClosingWords{})
	if kept.GoodbyeLine != template || *summary != mentor.SummarizeSession(closing, start, end) {
		t.Fatalf("without words: goodbye %q, summary %q", kept.GoodbyeLine, *summary)
	}
}
