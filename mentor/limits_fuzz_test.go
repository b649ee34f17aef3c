package mentor

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The fuzz targets below check the validators against the limits as the
// README states them, written out again here rather than read from the
// code under test: whatever a client sends is either refused with a
// CodeInvalid error or comes back inside every limit.

// maxMessageBytes bounds a refusal's message: it may quote a little of the
// input (a metadata key), never echo a whole turn back.
const maxMessageBytes = 1000

// requireInvalid fails unless err is a *Error with CodeInvalid and a
// message fit to show the client.
func requireInvalid(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalid {
		t.Fatalf("want a CodeInvalid *Error, got %T %v", err, err)
	}
	if e.Message == "" || !utf8.ValidString(e.Message) || len(e.Message) > maxMessageBytes {
		t.Fatalf("message %q: want non-empty valid UTF-8 of at most %d bytes", e.Message, maxMessageBytes)
	}
}

// accepted checks a validator's verdict on in against the expected one: a
// refusal must be a clear invalid-input error. It reports whether in was
// accepted, so that the caller checks the result.
func accepted(t *testing.T, err error, acceptable bool, in any) bool {
	t.Helper()
	if err != nil {
		requireInvalid(t, err)
		if acceptable {
			t.Fatalf("refused %+v, which is within every limit: %v", in, err)
		}
		return false
	}
	if !acceptable {
		t.Fatalf("accepted %+v, which breaks a limit", in)
	}
	return true
}

// fitText tells whether s is text the store takes: trimmed, non-empty, at
// most max characters, valid UTF-8 without control characters other than
// tab and line breaks, and without bidirectional overrides.
func fitText(s string, max int) bool {
	return s != "" && s == strings.TrimSpace(s) && fitOptionalText(s, max)
}

// fitOptionalText is fitText for text that may be empty.
func fitOptionalText(s string, max int) bool {
	return utf8.RuneCountInString(s) <= max && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7F && r <= 0x9F ||
			r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
	})
}

// FuzzValidateTurns posts n turns alternating between two fuzzed ones.
func FuzzValidateTurns(f *testing.F) {
	f.Fuzz(func(t *testing.T, role1, content1, id1, role2, content2, id2 string, n uint16) {
		pair := [2]Turn{{ID: id1, Role: role1, Content: content1}, {ID: id2, Role: role2, Content: content2}}
		turns := make([]Turn, int(n)%(MaxTurnsPerUpdate+2))
		for i := range turns {
			turns[i] = pair[i%2]
		}
		acceptable := len(turns) > 0 && len(turns) <= MaxTurnsPerUpdate
		for _, turn := range pair[:min(len(turns), 2)] {
			acceptable = acceptable && (turn.Role == RoleUser || turn.Role == RoleAssistant) &&
				fitText(strings.TrimSpace(turn.Content), MaxTurnChars) &&
				fitOptionalText(strings.TrimSpace(turn.ID), MaxTurnIDChars)
		}

		clean, err := ValidateTurns(turns, time.Now())
		for i, turn := range turns {
			if turn != pair[i%2] {
				t.Fatalf("turn %d of the input changed to %+v", i+1, turn)
			}
		}
		if !accepted(t, err, acceptable, pair) {
			return
		}
		if len(clean) != len(turns) || len(clean) > MaxTurnsPerUpdate {
			t.Fatalf("%d turns in, %d out", len(turns), len(clean))
		}
		for i, c := range clean {
			in := turns[i]
			want := Turn{ID: strings.TrimSpace(in.ID), Role: in.Role, Content: strings.TrimSpace(in.Content)}
			if c != want {
				t.Fatalf("turn %d: got %+v, want %+v", i+1, c, want)
			}
			if !fitText(c.Content, MaxTurnChars) || !fitOptionalText(c.ID, MaxTurnIDChars) {
				t.Fatalf("turn %d breaks a limit: %+v", i+1, c)
			}
		}
	})
}

func FuzzValidateSearch(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string, limit int, includeArchive bool) {
		learner := "0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11"
		in := SearchQuery{Text: text, LearnerID: &learner, IncludeArchive: includeArchive, Limit: limit}
		acceptable := fitText(strings.TrimSpace(text), MaxSearchChars) && limit >= 0 && limit <= MaxSearchLimit

		q, err := ValidateSearch(in)
		if !accepted(t, err, acceptable, in) {
			return
		}
		wantLimit := limit
		if limit == 0 {
			wantLimit = DefaultSearchLimit
		}
		if q.Text != strings.TrimSpace(text) || q.Limit != wantLimit || q.LearnerID != &learner || q.IncludeArchive != includeArchive {
			t.Fatalf("got %+v from %+v", q, in)
		}
		if !fitText(q.Text, MaxSearchChars) || q.Limit < 1 || q.Limit > MaxSearchLimit {
			t.Fatalf("out of limits: %+v", q)
		}
	})
}
