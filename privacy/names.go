package privacy

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// minNameRunes is the shortest name masked: a one-letter name would hide
// every "A" and "I" in the prompt.
const minNameRunes = 2

// names finds the names the service knows in a text.
//
// A name counts as a whole word (or words): "Max" is not found in
// "Maximum" or "Max2". Each of its words must start with the letter as the
// facilitator wrote it or with its capital, and the rest may be in any case:
// a learner saved as "Max" is found as "Max" and "MAX" but not as "max", so
// that "max speed" or "will" keeps its meaning; one saved as "emma" is
// found as "emma" and "Emma". Its words may be apart by any run of white
// space.
//
// A learner saved as "Alex Rivera" is mostly called "Alex": the first word
// of a name is found too, as the same person, unless it is another known
// name or the first word of one as well, and the prompt could not tell whom
// it means. A last name alone ("Mrs Rivera") is not found.
type names struct {
	// byInitial holds the names by their first letter in lower case, the
	// longest first, so that "Mary Ann" is tried before "Mary".
	byInitial map[rune][]knownName
}

type knownName struct {
	// written is what is looked for: the name as the facilitator wrote it,
	// white space collapsed, or its first word.
	written string
	// name is the whole name, which the placeholder stands for.
	name string
	kind kind
}

func newNames(n Names) names {
	var all []knownName
	taken := map[string]bool{}
	add := func(written, name string, k kind) {
		folded := strings.ToLower(written)
		if utf8.RuneCountInString(written) < minNameRunes || taken[folded] {
			return
		}
		taken[folded] = true
		all = append(all, knownName{written: written, name: name, kind: k})
	}
	addWhole := func(name string, k kind) {
		name = strings.Join(strings.Fields(name), " ")
		add(name, name, k)
	}
	// The learner first: another learner of the same name is the learner
	// as far as the prompt can tell.
	addWhole(n.Learner, learner)
	for _, other := range n.Others {
		addWhole(other, person)
	}
	byFirstWord := map[string][]knownName{}
	for _, whole := range all {
		if first, _, ok := strings.Cut(whole.name, " "); ok {
			byFirstWord[strings.ToLower(first)] = append(byFirstWord[strings.ToLower(first)], whole)
		}
	}
	for _, whole := range slices.Clone(all) {
		first, _, ok := strings.Cut(whole.name, " ")
		if ok && len(byFirstWord[strings.ToLower(first)]) == 1 {
			add(first, whole.name, whole.kind)
		}
	}

	byInitial := map[rune][]knownName{}
	for _, name := range all {
		initial, _ := utf8.DecodeRuneInString(strings.ToLower(name.written))
		byInitial[initial] = append(byInitial[initial], name)
	}
	for _, list := range byInitial {
		slices.SortStableFunc(list, func(a, b knownName) int { return cmp.Compare(len(b.written), len(a.written)) })
	}
	return names{byInitial: byInitial}
}

// find returns every name in text, in order.
func (n names) find(text string) []found {
	if len(n.byInitial) == 0 {
		return nil
	}
	var all []found
	before := utf8.RuneError
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(before) {
			if f, ok := n.at(text, i, r); ok {
				all = append(all, f)
				before, _ = utf8.DecodeLastRuneInString(text[:f.end])
				i = f.end
				continue
			}
		}
		before = r
		i += size
	}
	return all
}

// at returns the longest name that starts at text[i:], whose first letter
// is r, and ends at a word's end.
func (n names) at(text string, i int, r rune) (found, bool) {
	for _, name := range n.byInitial[unicode.ToLower(r)] {
		if end, ok := name.matchAt(text, i); ok && !isWordRune(runeAt(text, end)) {
			return found{start: i, end: end, kind: name.kind, key: strings.ToLower(name.name), value: name.name}, true
		}
	}
	return found{}, false
}

// matchAt returns where the name ends if it is written at text[i:], in a
// form that counts (see names).
func (name knownName) matchAt(text string, i int) (int, bool) {
	wordStart := true
	for _, want := range name.written {
		got, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case want == ' ':
			if !unicode.IsSpace(got) {
				return 0, false
			}
			for unicode.IsSpace(got) {
				i += size
				got, size = utf8.DecodeRuneInString(text[i:])
			}
			wordStart = true
			continue
		case wordStart:
			if got != want && got != unicode.ToUpper(want) {
				return 0, false
			}
		default:
			if unicode.ToLower(got) != unicode.ToLower(want) {
				return 0, false
			}
		}
		wordStart = false
		i += size
	}
	return i, true
}

// isWordRune reports whether r is part of a word or a number, so that a
// match next to it would cut the word in two.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// runeAt is the rune at text[i:], utf8.RuneError at the end.
func runeAt(text string, i int) rune {
	r, _ := utf8.DecodeRuneInString(text[i:])
	return r
}

// wholeWord reports whether text[start:end] cuts no word or number in two.
func wholeWord(text string, start, end int) bool {
	before, _ := utf8.DecodeLastRuneInString(text[:start])
	first := runeAt(text, start)
	last, _ := utf8.DecodeLastRuneInString(text[:end])
	return !(isWordRune(before) && isWordRune(first)) && !(isWordRune(last) && isWordRune(runeAt(text, end)))
}
