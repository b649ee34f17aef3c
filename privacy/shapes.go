package privacy

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// shape finds the details told by their shape rather than known by name.
type shape struct {
	re *regexp.Regexp
	// regions are the parts of a text that a match must lie within. The
	// regexp package reads these patterns at 5 to 15 MB/s, and most of a
	// conversation holds no contact detail: searching only where one may be
	// keeps a long prompt quick to mask.
	regions func(text string) []region
	// identify says what a match is and which value (see found), or false
	// when it is not one after all, such as a date shaped like a phone
	// number.
	identify func(match string) (kind, string, bool)
}

// region is text[start:end].
type region struct{ start, end int }

// shapes are the details every prompt is searched for.
var shapes = []shape{
	{re: emailPattern, regions: runs(isNotSpace, hasAt), identify: identifyEmail},
	{re: phonePattern, regions: runs(isPhoneRune, hasPhoneDigits), identify: identifyPhone},
	{re: addressPattern, regions: numbersStartingWords, identify: identifyAddress},
	// A placeholder already in the data, one a model once made up and that
	// was stored as it was, is hidden like any value: left as it is, it
	// could be taken for the placeholder this prompt gives someone else,
	// and restored as them.
	{re: placeholderLike, regions: wholeText, identify: identifyPlaceholder},
}

// emailPattern is an email address with a plain ASCII local part.
var emailPattern = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`)

// phonePattern is what a phone number may look like: an optional +country
// code, an optional area code (in parentheses or not), then groups of
// digits apart by one space, dot or dash, as in "555-123-4567",
// "(555) 123-4567", "+44 20 7946 0958", "07700 900123" or "06 12 34 56 78";
// or a run of 10 to 15 digits. identifyPhone rules out the numbers that
// only look like one.
var phonePattern = regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?|\d{1,5}[ .-])?\d{2,8}(?:[ .-]\d{2,8}){0,4}\b|\+?\d{10,15}\b`)

// addressPattern is a street address, conservatively: a house number, one
// to four capitalised words (or an ordinal such as "5th") and a street
// suffix, as in "42 Oak Street", "7 Elm Ave" or "221B Baker Street". A
// street written in lower case, a city or a postcode is not matched. It is
// tried where a number starts a word (see numbersStartingWords).
var addressPattern = regexp.MustCompile(`^\d{1,5}[A-Za-z]?(?: +(?:\p{Lu}[\p{L}'.-]*|\d+(?:st|nd|rd|th))){1,4} +` +
	`(?i:street|st|avenue|ave|road|rd|lane|ln|drive|dr|boulevard|blvd|court|ct|place|pl|terrace|way|close|crescent|circle|square|parkway|highway)\b`)

// identifyEmail takes an address in any case for the same value.
func identifyEmail(match string) (kind, string, bool) { return email, strings.ToLower(match), true }

// identifyAddress takes an address in any case and spacing for the same
// value.
func identifyAddress(match string) (kind, string, bool) {
	return address, strings.ToLower(strings.Join(strings.Fields(match), " ")), true
}

// The digits a phone number has, with its country code.
const (
	minPhoneDigits = 7
	maxPhoneDigits = 15
)

// identifyPhone takes a match of phonePattern for a phone number when it has
// 7 to 15 digits and is not a plain number, a decimal, a date or a range of
// years. Its digits are its key, so one number written two ways is one
// value.
func identifyPhone(match string) (kind, string, bool) {
	digits := strings.Map(keepDigits, match)
	groups := strings.FieldsFunc(match, func(r rune) bool { return !isDigit(r) })
	international := strings.HasPrefix(match, "+")
	switch {
	case len(digits) < minPhoneDigits || len(digits) > maxPhoneDigits:
		return "", "", false
	case len(groups) == 1 && len(digits) < 10 && !international: // a count, an amount
		return "", "", false
	case len(groups) == 2 && strings.Count(match, ".") == 1 && !strings.ContainsAny(match, " -()+"): // 3.1415926
		return "", "", false
	case isDate(groups) || isYears(groups):
		return "", "", false
	}
	if international {
		digits = "+" + digits
	}
	return phone, digits, true
}

// isDate reports whether groups of digits read as a date: 2024-05-01,
// 01.05.2024.
func isDate(groups []string) bool {
	if len(groups) != 3 {
		return false
	}
	a, b, c := len(groups[0]), len(groups[1]), len(groups[2])
	return (a == 4 && b <= 2 && c <= 2) || (a <= 2 && b <= 2 && c == 4)
}

// isYears reports whether groups of digits are years, as in "the 2019-2020
// school year".
func isYears(groups []string) bool {
	for _, g := range groups {
		if len(g) != 4 || !(strings.HasPrefix(g, "19") || strings.HasPrefix(g, "20")) {
			return false
		}
	}
	return true
}

// identifyPlaceholder hides a placeholder found in the data as a value of
// the kind it names; "[LEARNER]" names no one this prompt knows, so it
// stands for a person.
func identifyPlaceholder(match string) (kind, string, bool) {
	word, _, _ := strings.Cut(strings.ToUpper(strings.Trim(match, "[]")), "_")
	k := kind(word)
	if k == learner {
		k = person
	}
	return k, match, true
}

// find returns every match of the shape in text that is what it looks like
// and cuts no word in two, in order.
func (s shape) find(text string) []found {
	var all []found
	for _, r := range s.regions(text) {
		for at := r.start; at < r.end; {
			loc := s.re.FindStringIndex(text[at:r.end])
			if loc == nil {
				break
			}
			start, end := at+loc[0], at+loc[1]
			if k, key, ok := s.identify(text[start:end]); ok && wholeWord(text, start, end) {
				all = append(all, found{start: start, end: end, kind: k, key: key})
				at = end
				continue
			}
			// A match that is not one may hide one that starts inside it.
			_, size := utf8.DecodeRuneInString(text[start:])
			at = start + size
		}
	}
	return all
}

// runs returns the regions function of the longest runs of runes that are
// in, and that keep approves of.
func runs(in func(rune) bool, keep func(run string) bool) func(text string) []region {
	return func(text string) []region {
		var all []region
		start := -1
		for i, r := range text {
			switch {
			case in(r) && start < 0:
				start = i
			case !in(r) && start >= 0:
				if keep(text[start:i]) {
					all = append(all, region{start, i})
				}
				start = -1
			}
		}
		if start >= 0 && keep(text[start:]) {
			all = append(all, region{start, len(text)})
		}
		return all
	}
}

// maxAddressBytes bounds the region an address is looked for in.
const maxAddressBytes = 160

// numbersStartingWords returns a region from each number that starts a
// word, where an address may start, to the end of its line, at most
// maxAddressBytes long.
func numbersStartingWords(text string) []region {
	var all []region
	before := utf8.RuneError
	for i, r := range text {
		if isDigit(r) && !isWordRune(before) {
			end := min(len(text), i+maxAddressBytes)
			if nl := strings.IndexByte(text[i:end], '\n'); nl >= 0 {
				end = i + nl
			}
			all = append(all, region{i, end})
		}
		before = r
	}
	return all
}

func wholeText(text string) []region { return []region{{0, len(text)}} }

func isNotSpace(r rune) bool { return !unicode.IsSpace(r) }

func hasAt(run string) bool { return strings.Contains(run, "@") }

func hasPhoneDigits(run string) bool { return countDigits(run) >= minPhoneDigits }

// isPhoneRune reports whether r may be part of a phone number.
func isPhoneRune(r rune) bool {
	switch r {
	case ' ', '.', '-', '(', ')', '+':
		return true
	}
	return isDigit(r)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func countDigits(s string) int {
	n := 0
	for i := range len(s) {
		if isDigit(rune(s[i])) {
			n++
		}
	}
	return n
}

// keepDigits is a strings.Map function that keeps the ASCII digits only.
func keepDigits(r rune) rune {
	if isDigit(r) {
		return r
	}
	return -1
}
