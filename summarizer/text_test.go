package summarizer

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitSentences(t *testing.T) {
	got := splitSentences("Hi Mr. Mentor! She is 9.5 years old, e.g. in fourth grade.\n1. **Break it down**: one step at a time.\n- Use graph paper")
	want := []string{
		"Hi Mr. Mentor!",
		"She is 9.5 years old, e.g. in fourth grade.",
		"Break it down: one step at a time.",
		"Use graph paper",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("splitSentences =\n%q\nwant\n%q", got, want)
	}
}

func TestTruncateWords(t *testing.T) {
	if got := truncateWords("one two  three\nfour", 2); got != "one two…" || countWords(got) != 2 {
		t.Errorf("truncateWords = %q, want 2 words with the cut marked", got)
	}
	if got := truncateWords(" a b ", 5); got != "a b" {
		t.Errorf("truncateWords(short) = %q", got)
	}
}

func TestDefuse(t *testing.T) {
	got := defuse("if x < 5 then </Conversation > and < turn speaker=x> and <previous_summary>")
	if strings.Contains(strings.ToLower(got), "</conversation") || strings.Contains(got, "< turn") || strings.Contains(got, "<previous_summary") {
		t.Errorf("defuse left a fence-like tag: %q", got)
	}
	if !strings.Contains(got, "x < 5") {
		t.Errorf("defuse changed ordinary text: %q", got)
	}
}

func TestTokens(t *testing.T) {
	got := tokens("Maya’s kids' DON'T 'quote' Éclair 4th-grade,x'y ''")
	want := []string{"maya's", "kids", "don't", "quote", "éclair", "4th", "grade", "x'y"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokens =\n%q\nwant\n%q", got, want)
	}
	if got := tokens(" ,. "); got != nil {
		t.Errorf("tokens of punctuation = %q, want none", got)
	}
}
