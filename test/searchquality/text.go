package searchquality

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"

	"mentormemory/test/textgen"
)

// filler expands {key} placeholders. Keys found in vars are used as given;
// keys naming a word pool draw a value the first time they are seen and
// reuse it for the rest of the filler's life, so a template, or a fact with
// its statement and its questions, stays consistent about "which day".
type filler struct {
	rng   *rand.Rand
	vars  map[string]string
	drawn map[string]string
}

func newFiller(rng *rand.Rand, vars map[string]string) *filler {
	return &filler{rng: rng, vars: vars, drawn: map[string]string{}}
}

// fill expands tmpl, leaving case alone (sentence capitalizes). An unknown
// key is a bug in the templates, so it panics rather than leak "{key}" into
// the data.
func (f *filler) fill(tmpl string) string { return textgen.Fill(tmpl, f.value) }

func (f *filler) value(key string) string {
	if v, ok := f.vars[key]; ok {
		return v
	}
	if v, ok := f.drawn[key]; ok {
		return v
	}
	pool, ok := pools[key]
	if !ok {
		panic(fmt.Sprintf("searchquality: unknown placeholder {%s}", key))
	}
	v := f.fill(textgen.Pick(f.rng, pool)) // pool values may hold placeholders too
	f.drawn[key] = v
	return v
}

// Words splits text into lower-case runs of letters and digits: the
// tokenizer of the reference BM25 and of the generator's own checks.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// questionStopwords are words too common to carry a question: they are
// never chosen as the word to misspell.
var questionStopwords = set(`a about again all am an and any anything are at be been before bring
brought by can did do does doing for from get go going has have how i if in is it its just me
mention mentioned my of on or our say said so talk talked tell that the them there these they
thing this to told us was we were what whats when where which who why will with you your
remind remember discuss discussed`)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// misspell returns word with one realistic typing slip: a doubled letter
// made single, two neighbours swapped, a vowel dropped or a letter doubled.
// The first letter is kept, as people rarely get it wrong.
func misspell(rng *rand.Rand, word string) string {
	r := []rune(word)
	for i := 1; i+1 < len(r); i++ {
		if r[i] == r[i+1] && rng.IntN(2) == 0 {
			return string(append(r[:i:i], r[i+1:]...))
		}
	}
	isVowel := func(c rune) bool { return strings.ContainsRune("aeiou", c) }
	switch rng.IntN(3) {
	case 0: // swap two interior neighbours that differ
		for range 8 {
			i := 1 + rng.IntN(len(r)-2)
			if r[i] != r[i+1] {
				r[i], r[i+1] = r[i+1], r[i]
				return string(r)
			}
		}
	case 1: // drop an interior vowel
		var at []int
		for i := 1; i < len(r)-1; i++ {
			if isVowel(r[i]) {
				at = append(at, i)
			}
		}
		if len(at) > 0 {
			i := textgen.Pick(rng, at)
			return string(append(r[:i:i], r[i+1:]...))
		}
	}
	// double an interior consonant
	for range 8 {
		i := 1 + rng.IntN(len(r)-2)
		if !isVowel(r[i]) {
			return string(r[:i+1]) + string(r[i]) + string(r[i+1:])
		}
	}
	return string(append(r[:1:1], r[2:]...)) // drop the second letter
}

// sharedRun returns the first run of n words a and b have in common.
func sharedRun(a, b string, n int) string {
	runs := map[string]bool{}
	bw := Words(b)
	for i := 0; i+n <= len(bw); i++ {
		runs[strings.Join(bw[i:i+n], " ")] = true
	}
	aw := Words(a)
	for i := 0; i+n <= len(aw); i++ {
		if r := strings.Join(aw[i:i+n], " "); runs[r] {
			return r
		}
	}
	return ""
}
