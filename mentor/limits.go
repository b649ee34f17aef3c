package mentor

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Limits on what a client may send. They are generous for the web client,
// which may resend its whole history, and they keep one request's work
// bounded. The README states them.
const (
	MaxTurnsPerUpdate  = 500
	MaxTurnChars       = 20_000
	MaxTurnIDChars     = 200
	MaxLearnerNameChar = 100
	MaxSearchChars     = 500
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
	// An archived conversation's turns come a page at a time: the default
	// page holds a whole ordinary segment (50 turns), the largest as many
	// turns as one post may carry.
	DefaultArchivePage = 100
	MaxArchivePage     = 500
	MaxArchiveOffset   = 100_000
)

// A posted turn may say when it was said (a client importing history does).
// A clock a little fast is forgiven; a turn from further in the future is a
// mistake, and would be taken for the latest thing said for as long as it
// stays ahead.
const MaxTurnTimeAhead = 5 * time.Minute

// EarliestTurnTime is the earliest time a turn may carry: before it, a time
// is a client's zero value or a typo, not history.
var EarliestTurnTime = time.Date(1970, time.January, 1, 0, 0, 0, 0, time.UTC)

// ValidateTurns checks posted turns and returns them with content trimmed.
// A turn's time, when it has one, must lie between EarliestTurnTime and
// MaxTurnTimeAhead past now; one without is stored at the server's time.
func ValidateTurns(turns []Turn, now time.Time) ([]Turn, error) {
	if len(turns) == 0 {
		return nil, Errorf(CodeInvalid, "Conversation turns required")
	}
	if len(turns) > MaxTurnsPerUpdate {
		return nil, Errorf(CodeInvalid, "Too many conversation turns: at most %d per request", MaxTurnsPerUpdate)
	}
	for i, t := range turns {
		if err := CheckTurnTime(t.CreatedAt, now); err != nil {
			return nil, Errorf(CodeInvalid, "Turn %d: %s", i+1, ErrorMessage(err))
		}
	}
	return CheckTurns(turns)
}

// CheckTurnTime checks the time a turn says it was said (the zero time:
// none): what a post accepts, and an import too.
func CheckTurnTime(at, now time.Time) error {
	switch {
	case at.IsZero():
		return nil
	case at.Before(EarliestTurnTime):
		return Errorf(CodeInvalid, "created_at %s is before %d", at.Format(time.RFC3339), EarliestTurnTime.Year())
	case at.After(now.Add(MaxTurnTimeAhead)):
		return Errorf(CodeInvalid, "created_at %s is in the future (the server's clock reads %s; at most %s ahead is accepted)",
			at.Format(time.RFC3339), now.UTC().Format(time.RFC3339), MaxTurnTimeAhead)
	}
	return nil
}

// CheckTurns checks each of turns as ValidateTurns does, but for their
// number (the caller bounds it: a chat's history is not a post) and their
// times, and returns them with content trimmed.
func CheckTurns(turns []Turn) ([]Turn, error) {
	clean := make([]Turn, len(turns))
	for i, t := range turns {
		if t.Role != RoleUser && t.Role != RoleAssistant {
			return nil, Errorf(CodeInvalid, "Turn %d: role must be \"user\" or \"assistant\"", i+1)
		}
		content := strings.TrimSpace(t.Content)
		if content == "" {
			return nil, Errorf(CodeInvalid, "Turn %d: content required", i+1)
		}
		if utf8.RuneCountInString(content) > MaxTurnChars {
			return nil, Errorf(CodeInvalid, "Turn %d: content too long (at most %d characters)", i+1, MaxTurnChars)
		}
		if err := checkText(content, "Turn content"); err != nil {
			return nil, err
		}
		id := strings.TrimSpace(t.ID)
		if utf8.RuneCountInString(id) > MaxTurnIDChars {
			return nil, Errorf(CodeInvalid, "Turn %d: id too long (at most %d characters)", i+1, MaxTurnIDChars)
		}
		if err := checkText(id, "Turn id"); err != nil {
			return nil, err
		}
		clean[i] = Turn{ID: id, Role: t.Role, Content: content, CreatedAt: t.CreatedAt}
	}
	return clean, nil
}

// ValidateLearnerName checks and trims a learner's name.
func ValidateLearnerName(name string) (string, error) {
	return requiredText(name, "Learner name", MaxLearnerNameChar)
}

// ValidateSearch checks a search query and applies the default limit.
func ValidateSearch(q SearchQuery) (SearchQuery, error) {
	var err error
	if q.Text, err = requiredText(q.Text, "Search text", MaxSearchChars); err != nil {
		return q, err
	}
	q.Limit, err = ValidateSearchLimit(q.Limit)
	return q, err
}

// ValidateSearchLimit checks how many results a search asks for and
// applies the default (0: not given).
func ValidateSearchLimit(limit int) (int, error) {
	return pageLimit(limit, DefaultSearchLimit, MaxSearchLimit)
}

// ValidateArchiveQuery checks the page asked for and applies the default
// limit.
func ValidateArchiveQuery(q ArchiveQuery) (ArchiveQuery, error) {
	var err error
	if q.Limit, err = pageLimit(q.Limit, DefaultArchivePage, MaxArchivePage); err != nil {
		return q, err
	}
	return q, pageOffset(q.Offset, MaxArchiveOffset)
}

// ParseArchiveID reads an archived conversation's id from a client.
func ParseArchiveID(raw string) (string, error) {
	id, err := ParseLearnerID(raw)
	if err != nil || id == nil {
		return "", Errorf(CodeInvalid, "archive id must be a uuid")
	}
	return *id, nil
}

// pageLimit is how many results a page holds: def when limit is 0 (not
// given), otherwise limit, which must be from 1 to max.
func pageLimit(limit, def, max int) (int, error) {
	switch {
	case limit == 0:
		return def, nil
	case limit < 0 || limit > max:
		return limit, Errorf(CodeInvalid, "limit must be between 1 and %d", max)
	}
	return limit, nil
}

// pageOffset checks how many results a page skips: from 0 to max.
func pageOffset(offset, max int) error {
	if offset < 0 || offset > max {
		return Errorf(CodeInvalid, "offset must be between 0 and %d", max)
	}
	return nil
}

// ParseLearnerID turns an optional learner id from a client into its
// canonical form; "" and "null" mean the general conversation.
func ParseLearnerID(raw string) (*string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "null" {
		return nil, nil
	}
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return nil, Errorf(CodeInvalid, "learner_id must be a uuid")
	}
	s := id.String()
	return &s, nil
}

// checkText refuses what Postgres text cannot hold (NUL) and text that was
// not valid UTF-8 to begin with.
// requiredText trims text and checks that it is there, at most max
// characters long, and plain text; what names it in the error.
func requiredText(text, what string, max int) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", Errorf(CodeInvalid, "%s required", what)
	}
	if utf8.RuneCountInString(text) > max {
		return "", Errorf(CodeInvalid, "%s too long (at most %d characters)", what, max)
	}
	return text, checkText(text, what)
}

func checkText(s, what string) error {
	if strings.ContainsRune(s, 0) {
		return Errorf(CodeInvalid, "%s must not contain NUL characters", what)
	}
	if !utf8.ValidString(s) {
		return Errorf(CodeInvalid, "%s must be valid UTF-8", what)
	}
	if strings.ContainsFunc(s, hiddenControl) {
		return Errorf(CodeInvalid, "%s must not contain control characters (tab and line breaks are fine)", what)
	}
	return nil
}

// hiddenControl reports whether r is a control character other than tab and
// line breaks, or one that reorders text (a right-to-left override): each
// would reach the mentor's prompts, the logs or the screen of the person
// reading, where it can hide or rearrange what was written.
func hiddenControl(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case unicode.IsControl(r):
		return true
	}
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}
