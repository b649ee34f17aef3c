// Package privacy keeps what identifies a family out of the prompts the
// service sends a model provider for its background work (memory
// extraction, summaries).
//
// A Masker replaces, in the data of one prompt, the names the service knows
// (the learner's, the facilitator's other learners'), email addresses, phone
// numbers and street addresses with placeholders: [LEARNER], [PERSON_1],
// [EMAIL_1], [PHONE_1], [ADDRESS_1]. The same value gets the same
// placeholder throughout the prompt, so the model can still tell who is who.
// Restore puts the real values back into what the model returns. The
// mapping lives only in the Masker, in memory, for one prompt and its reply:
// it is never sent, stored or logged.
package privacy

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"mentormemory/mentor"
)

// Names are the people the service knows by name, as the facilitator wrote
// them.
type Names struct {
	// Learner is the learner the prompt is about; "" for the general
	// conversation.
	Learner string
	// Others are the facilitator's other learners.
	Others []string
}

// kind is what a placeholder stands for; it is the placeholder's word.
type kind string

const (
	learner kind = "LEARNER"
	person  kind = "PERSON"
	email   kind = "EMAIL"
	phone   kind = "PHONE"
	address kind = "ADDRESS"
)

// Instructions tell a model what the placeholders in its data are. Every
// prompt whose data is masked includes them, so that the model writes the
// placeholders back rather than guessing at the values.
const Instructions = `Names, email addresses, phone numbers and street addresses in the data are replaced by placeholders in square brackets: [LEARNER] is the learner, and [PERSON_1], [EMAIL_1], [PHONE_1], [ADDRESS_1] and so on stand for other people and their details. Write a placeholder exactly as it appears wherever you would write what it stands for, and never make one up.`

// Masker masks the data of one prompt and restores the model's reply to it.
// It is not safe for concurrent use; each prompt has its own.
type Masker struct {
	names names
	// placeholders maps a value's identity (its kind and key, see found) to
	// its placeholder; values maps a placeholder back to the value as the
	// data first had it.
	placeholders map[string]string
	values       map[string]string
	counts       map[kind]int
}

// NewMasker returns the masker of one prompt that may mention names.
func NewMasker(names Names) *Masker {
	return &Masker{
		names:        newNames(names),
		placeholders: map[string]string{},
		values:       map[string]string{},
		counts:       map[kind]int{},
	}
}

// Mask returns text with every name, email address, phone number and street
// address it finds replaced by its placeholder. Where two finds overlap, the
// one that starts first wins, and of two that start together the longer:
// an email address over the name in it, "Mary Ann" over "Mary".
func (m *Masker) Mask(text string) string {
	var b strings.Builder
	at := 0
	for _, f := range m.find(text) {
		b.WriteString(text[at:f.start])
		b.WriteString(m.placeholder(f, text[f.start:f.end]))
		at = f.end
	}
	b.WriteString(text[at:])
	return b.String()
}

// Turns returns the turns with their content masked; the turns given are
// left as they are.
func (m *Masker) Turns(turns []mentor.Turn) []mentor.Turn {
	masked := make([]mentor.Turn, len(turns))
	for i, t := range turns {
		t.Content = m.Mask(t.Content)
		masked[i] = t
	}
	return masked
}

// Restore returns text with each placeholder this masker gave out replaced
// by its value: a name as the facilitator saved it, a contact detail as the
// data first wrote it. A model may write a placeholder in another case
// ("[Learner]"); it is restored too. A placeholder the masker never gave out
// is one the model made up: it stands for nothing the service knows, so it
// is left as it is rather than guessed at or refused.
func (m *Masker) Restore(text string) string {
	return placeholderLike.ReplaceAllStringFunc(text, func(p string) string {
		if value, ok := m.values[strings.ToUpper(p)]; ok {
			return value
		}
		return p
	})
}

// placeholderLike matches any placeholder of this package's shape, in any
// case.
var placeholderLike = regexp.MustCompile(`(?i)\[(?:LEARNER|(?:PERSON|EMAIL|PHONE|ADDRESS)_\d+)\]`)

// found is one value to hide: text[start:end] is of kind, and key says which
// value it is, so that "(555) 123-4567" and "555.123.4567" get one
// placeholder and "Max" and "MAX" another.
type found struct {
	start, end int
	kind       kind
	key        string
	// value is what the placeholder restores to; the text found when "".
	value string
}

// find returns what text holds to hide, in order and without overlaps.
func (m *Masker) find(text string) []found {
	all := m.names.find(text)
	for _, s := range shapes {
		all = append(all, s.find(text)...)
	}
	slices.SortStableFunc(all, func(a, b found) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
	})
	kept := all[:0]
	end := 0
	for _, f := range all {
		if f.start >= end {
			kept = append(kept, f)
			end = f.end
		}
	}
	return kept
}

// placeholder returns the placeholder of the value found, giving the next of
// its kind to a value not seen before in this prompt.
func (m *Masker) placeholder(f found, text string) string {
	identity := string(f.kind) + "\x00" + f.key
	if p, ok := m.placeholders[identity]; ok {
		return p
	}
	// A prompt is about one learner at most, who needs no number.
	p := "[" + string(learner) + "]"
	if f.kind != learner {
		m.counts[f.kind]++
		p = "[" + string(f.kind) + "_" + strconv.Itoa(m.counts[f.kind]) + "]"
	}
	m.placeholders[identity] = p
	m.values[p] = cmp.Or(f.value, text)
	return p
}
