package mentor

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Caller is the verified identity behind a request: the facilitator's user id
// (the JWT sub) and the verified claims, which the store hands to Postgres so
// that row-level security decides what the caller may see.
type Caller struct {
	UserID string          // uuid, lower case
	Email  string          // may be empty
	Claims json.RawMessage // the verified JWT claims as a JSON object
}

type callerKey struct{}

// WithCaller returns a context that carries the caller.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller stored by WithCaller.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// maxFirstName bounds the name an opening greets a facilitator by.
const maxFirstName = 40

// FirstName is what the mentor calls the facilitator, or "" when nothing
// says: the first word of the name Supabase keeps in the token's
// user_metadata (full_name, then name, as sign-up and the OAuth providers
// write them), else the first word of the email address when it reads as
// a name ("dana@…", "dana.smith@…"). An address such as "info@…" or
// "x7@…" names nobody, and greeting nobody beats greeting "Info".
func (c Caller) FirstName() string {
	var claims struct {
		UserMetadata map[string]any `json:"user_metadata"`
	}
	_ = json.Unmarshal(c.Claims, &claims)
	for _, key := range []string{"full_name", "name"} {
		if name, _ := claims.UserMetadata[key].(string); firstWord(name) != "" {
			return firstWord(name)
		}
	}
	return nameInEmail(c.Email)
}

// firstWord is the first word of a person's name, of letters and the
// marks, apostrophes and hyphens names have; "" when it has anything else,
// so a name cannot carry text of its own into a prompt.
func firstWord(name string) string {
	fields := strings.Fields(name)
	if len(fields) == 0 || utf8.RuneCountInString(fields[0]) > maxFirstName {
		return ""
	}
	for _, r := range fields[0] {
		if !unicode.IsLetter(r) && !unicode.IsMark(r) && !strings.ContainsRune("'’-", r) {
			return ""
		}
	}
	return fields[0]
}

// mailboxes are addresses' local parts that name a role, not a person.
var mailboxes = []string{"admin", "contact", "family", "hello", "home", "info", "mail", "office", "parent", "parents",
	"school", "support", "teacher", "team"}

// nameInEmail is the first name an address's local part spells: one to
// three words of letters joined by dots, dashes or underscores, the first
// of two letters or more ("dana", "dana.smith", "mary_ann_lee").
func nameInEmail(email string) string {
	local, _, found := strings.Cut(email, "@")
	if !found {
		return ""
	}
	local, _, _ = strings.Cut(local, "+")
	words := strings.FieldsFunc(local, func(r rune) bool { return r == '.' || r == '-' || r == '_' })
	if len(words) == 0 || len(words) > 3 || utf8.RuneCountInString(words[0]) < 2 {
		return ""
	}
	for _, w := range words {
		for _, r := range w {
			if !unicode.IsLetter(r) {
				return ""
			}
		}
	}
	first := strings.ToLower(words[0])
	if slices.Contains(mailboxes, first) || utf8.RuneCountInString(first) > maxFirstName {
		return ""
	}
	r := []rune(first)
	return string(unicode.ToUpper(r[0])) + string(r[1:])
}
