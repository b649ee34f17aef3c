package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// reader reads variables through getenv and keeps what is wrong with them,
// so that one start reports every problem at once, each naming its
// variable. A variable that cannot be read keeps its default.
type reader struct {
	getenv   func(string) string
	problems []error
}

func (r *reader) fail(format string, args ...any) {
	r.problems = append(r.problems, fmt.Errorf(format, args...))
}

// text is the variable without surrounding space.
func (r *reader) text(name string) string { return strings.TrimSpace(r.getenv(name)) }

func (r *reader) number(name string, def, lo, hi int) int {
	raw := r.text(name)
	if raw == "" {
		return def
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		r.fail("%s must be a whole number from %d to %d, got %q", name, lo, hi, raw)
		return def
	}
	return n
}

// boolean accepts the usual spellings (true/false, 1/0, t/f) and nothing
// else, so a typo such as "ture" is an error rather than a silent false.
func (r *reader) boolean(name string) bool {
	raw := r.text(name)
	if raw == "" {
		return false
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		r.fail("%s must be true or false, got %q", name, raw)
	}
	return b
}

// choice reads a variable that is either off (empty or the first value)
// or on (the second), and refuses anything else.
func (r *reader) choice(name, off, on string) bool {
	switch raw := r.text(name); raw {
	case "", off:
		return false
	case on:
		return true
	default:
		r.fail("%s must be %s or %s, got %q", name, off, on, raw)
		return false
	}
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	raw := r.text(name)
	if raw == "" {
		return def
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d <= 0 {
		r.fail("%s must be a positive duration such as 20s, got %q", name, raw)
		return def
	}
	return d
}

// origins reads a comma-separated list of browser origins
// (scheme://host[:port], nothing after). A wildcard is refused: the API
// answers with facilitators' data, so every origin is named.
func (r *reader) origins(name string) []string {
	var origins []string
	for _, raw := range strings.Split(r.getenv(name), ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		if raw == "*" {
			r.fail("%s must name each origin (https://app.example.com); a wildcard is not allowed", name)
			return nil
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			r.fail("%s must list origins such as https://app.example.com, got %q", name, raw)
			return nil
		}
		origins = append(origins, u.Scheme+"://"+strings.ToLower(u.Host))
	}
	return origins
}
