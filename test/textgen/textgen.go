// Package textgen holds what the benchmark's data and the search-quality
// suite's labelled conversations are both written with: templates with
// {slot} placeholders, words drawn from pools, sentences capitalized.
// Everything draws from the caller's random stream, in a fixed order, so a
// seed always gives the same text: a loaded data set can be reused, and a
// recorded search-quality figure stays comparable.
package textgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"unicode"
)

// Fill replaces each {slot} of tmpl with value(slot). An unclosed brace is
// a bug in the templates, so it panics rather than leak into the data.
func Fill(tmpl string, value func(slot string) string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			panic(fmt.Sprintf("textgen: unclosed placeholder in %q", tmpl))
		}
		b.WriteString(tmpl[:open])
		b.WriteString(value(tmpl[open+1 : open+end]))
		tmpl = tmpl[open+end+1:]
	}
}

// Capitalize upper-cases the first letter of a sentence, past any leading
// spaces and quotes; a sentence that starts with anything else (a digit, a
// dash) is left as it is.
func Capitalize(s string) string {
	for i, r := range s {
		if unicode.IsLetter(r) {
			return s[:i] + string(unicode.ToUpper(r)) + s[i+len(string(r)):]
		}
		if !unicode.IsSpace(r) && r != '"' && r != '\'' {
			return s
		}
	}
	return s
}

// Pick chooses from xs, every entry alike.
func Pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// PickSkewed chooses from a pool with a skew towards its first entries, as
// words are used in real speech: a few often, most rarely.
func PickSkewed[T any](r *rand.Rand, pool []T) T {
	i := int(float64(len(pool)) * math.Pow(r.Float64(), 1.7))
	return pool[min(i, len(pool)-1)]
}
