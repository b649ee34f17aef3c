package mentor

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestValidateTurnsTrimsAndChecks(t *testing.T) {
	got, err := ValidateTurns([]Turn{{ID: " 7 ", Role: RoleUser, Content: "  hello  "}}, time.Now())
	if err != nil || got[0].Content != "hello" || got[0].ID != "7" {
		t.Fatalf("got %+v, %v", got, err)
	}
	bad := map[string][]Turn{
		"Conversation turns required":                nil,
		`Turn 1: role must be "user" or "assistant"`: {{Role: "system", Content: "x"}},
		"Turn 2: content required":                   {{Role: RoleUser, Content: "x"}, {Role: RoleAssistant, Content: "\n"}},
		"Turn 1: content too long":                   {{Role: RoleUser, Content: strings.Repeat("é", MaxTurnChars+1)}},
		"Turn content must not contain NUL":          {{Role: RoleUser, Content: "a\x00"}},
		"Turn content must be valid UTF-8":           {{Role: RoleUser, Content: "a\xff"}},
		"Turn content must not contain control":      {{Role: RoleUser, Content: "a\x1b[31mred"}},
		"Turn id must not contain control":           {{ID: "a\u202eb", Role: RoleUser, Content: "x"}},
		"Turn 1: id too long":                        {{ID: strings.Repeat("i", MaxTurnIDChars+1), Role: RoleUser, Content: "x"}},
	}
	for want, turns := range bad {
		if _, err := ValidateTurns(turns, time.Now()); err == nil || !strings.HasPrefix(ErrorMessage(err), want) || ErrorCode(err) != CodeInvalid {
			t.Errorf("want %q, got %v", want, err)
		}
	}
}

func TestParseLearnerID(t *testing.T) {
	for _, raw := range []string{"", "null", "  "} {
		if id, err := ParseLearnerID(raw); id != nil || err != nil {
			t.Errorf("%q: want general, got %v %v", raw, id, err)
		}
	}
	id, err := ParseLearnerID("0D9F0B1E-4A52-4A53-9D8E-2F7A1F0C6B11")
	if err != nil || *id != "0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11" {
		t.Fatalf("canonical form: %v %v", id, err)
	}
	for _, raw := range []string{"emma", "{0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11}", "0d9f0b1e4a524a539d8e2f7a1f0c6b11", "1; drop table learners"} {
		if _, err := ParseLearnerID(raw); err == nil {
			t.Errorf("%q accepted", raw)
		}
	}
}

// Tab and line breaks belong to text people write; other control characters
// and bidirectional overrides, which can hide or reorder what is shown, are
// refused wherever text is taken.
func TestControlCharactersAreRefused(t *testing.T) {
	if _, err := ValidateTurns([]Turn{{Role: RoleUser, Content: "line one\r\n\tline two"}}, time.Now()); err != nil {
		t.Fatalf("tab and line breaks: %v", err)
	}
	for _, bad := range []string{"Em\x1bma", "Em\u202ema", "Em\u2066ma", "Em\x7fma", "Em\u0085ma"} {
		if _, err := ValidateLearnerName(bad); err == nil || ErrorCode(err) != CodeInvalid {
			t.Errorf("learner name %q: %v, want refused", bad, err)
		}
		if _, err := ValidateSearch(SearchQuery{Text: bad}); err == nil {
			t.Errorf("search %q accepted", bad)
		}
	}
}

// A message longer than recall reads is its start, then the words only
// the rest has: within the bound, what the end is about still counted.
func TestRecallMessageKeepsTheStartAndTheRestsWords(t *testing.T) {
	short := "Emma struggled with fractions today"
	if got := RecallMessage("  " + short + " "); got != short {
		t.Fatalf("a short message: %q", got)
	}
	report := strings.Repeat("Emma read her book and the teacher was pleased. ", 120) +
		"Her fractions homework worried her, and the swimming lesson went well. Fractions again!"
	got := RecallMessage(report)
	if n := utf8.RuneCountInString(got); n > MaxRecallMessageChar || n < recallQueryStart-50 {
		t.Fatalf("%d characters, want at most %d and about the start's %d", n, MaxRecallMessageChar, recallQueryStart)
	}
	if !strings.HasPrefix(got, report[:200]) || !strings.HasSuffix(got, " fractions homework worried swimming lesson went") {
		t.Fatalf("the start, then the rest's own words once each, want ... fractions homework worried swimming lesson went: %q", got[len(got)-80:])
	}
	if _, err := ValidateRecallMessage(got); err != nil {
		t.Fatalf("what recall gets is refused: %v", err)
	}
}

// A posted turn may carry the time it was said: kept as given from 1970 to
// a few minutes past the server's clock, refused outside that with a
// message naming the turn; a turn without one gets the server's time later.
func TestTurnTimesAreKeptWithinTheirBounds(t *testing.T) {
	now := time.Date(2026, time.November, 26, 12, 0, 0, 0, time.UTC)
	said := time.Date(2023, time.December, 4, 18, 30, 0, 0, time.FixedZone("EST", -5*3600))
	got, err := ValidateTurns([]Turn{
		{Role: RoleUser, Content: "Sam went to the aquarium", CreatedAt: said},
		{Role: RoleAssistant, Content: "Lovely"},
		{Role: RoleUser, Content: "A clock a little fast", CreatedAt: now.Add(MaxTurnTimeAhead)},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !got[0].CreatedAt.Equal(said) || !got[1].CreatedAt.IsZero() || !got[2].CreatedAt.Equal(now.Add(MaxTurnTimeAhead)) {
		t.Fatalf("times not kept as posted: %+v", got)
	}
	for at, want := range map[time.Time]string{
		now.Add(MaxTurnTimeAhead + time.Second):                     "Turn 2: created_at 2026-11-26T12:05:01Z is in the future",
		time.Date(1969, time.December, 31, 23, 59, 59, 0, time.UTC): "Turn 2: created_at 1969-12-31T23:59:59Z is before 1970",
		time.Date(1, time.January, 1, 0, 0, 1, 0, time.UTC):         "Turn 2: created_at 0001-01-01T00:00:01Z is before 1970",
	} {
		_, err := ValidateTurns([]Turn{{Role: RoleUser, Content: "x"}, {Role: RoleAssistant, Content: "y", CreatedAt: at}}, now)
		if err == nil || ErrorCode(err) != CodeInvalid || !strings.HasPrefix(ErrorMessage(err), want) {
			t.Errorf("%s: got %v, want %q", at, err, want)
		}
	}
}
