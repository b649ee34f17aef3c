package privacy_test

import (
	"strings"
	"testing"

	"mentormemory/mentor"
	"mentormemory/privacy"
)

// family is the facilitator of these tests: a learner and three others.
var family = privacy.Names{Learner: "Max", Others: []string{"Mary", "Mary Ann", "Zoë"}}

// maskEach masks each text with a masker of its own and checks the result.
func maskEach(t *testing.T, names privacy.Names, cases map[string]string) {
	t.Helper()
	for text, want := range cases {
		if got := privacy.NewMasker(names).Mask(text); got != want {
			t.Errorf("Mask(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestMaskHidesTheNamesTheServiceKnows(t *testing.T) {
	m := privacy.NewMasker(family)
	got := m.Mask("Max told Mary Ann that Mary and Zoë would come. MAX was happy.")
	want := "[LEARNER] told [PERSON_1] that [PERSON_2] and [PERSON_3] would come. [LEARNER] was happy."
	if got != want {
		t.Fatalf("masked:\n got %q\nwant %q", got, want)
	}
	// The learner's name itself, as the prompt states it.
	if got := m.Mask("Max"); got != "[LEARNER]" {
		t.Errorf("the learner's name is masked as %q", got)
	}
}

// A name is a whole word, starting with its capital (or as saved), in any
// case after that, and the longest known name wins.
func TestNamesMatchWholeWordsAndTheirCapital(t *testing.T) {
	maskEach(t, family, map[string]string{
		"Maximum effort today":               "Maximum effort today",
		"Max2 is his username":               "Max2 is his username",
		"keep the max speed low":             "keep the max speed low",
		"Max's bike, (Max) and -Max-":        "[LEARNER]'s bike, ([LEARNER]) and -[LEARNER]-",
		"Mary Anne is new":                   "[PERSON_1] Anne is new",
		"Mary  Ann, on two lines: Mary\nAnn": "[PERSON_1], on two lines: [PERSON_1]",
		"ZOË and Zoëy":                       "[PERSON_1] and Zoëy",
		"Émile met Zoë":                      "Émile met [PERSON_1]",
	})
	// A name saved in lower case is found as saved and capitalised.
	maskEach(t, privacy.Names{Learner: "emma"}, map[string]string{
		"emma and Emma": "[LEARNER] and [LEARNER]",
	})
	// A one-letter name would hide every "A"; it is left alone.
	maskEach(t, privacy.Names{Learner: "A"}, map[string]string{
		"A dog and a cat": "A dog and a cat",
	})
}

// A first name alone is the whole name's person, unless it could be
// someone else's; the reply names them in full.
func TestFirstNamesStandForTheirWholeName(t *testing.T) {
	maskThenRestore(t, privacy.Names{Learner: "Alex Rivera", Others: []string{"Mary Smith", "Mary Jones", "Sam"}},
		"Alex met Mary Smith and Sam; Mary was late, Mrs Rivera too. ALEX RIVERA smiled.",
		"[LEARNER] met [PERSON_1] and [PERSON_2]; Mary was late, Mrs Rivera too. [LEARNER] smiled.",
		"[LEARNER] likes [PERSON_1].", "Alex Rivera likes Mary Smith.")
}

// maskThenRestore masks text and restores reply with one masker, as for a
// prompt and its reply, and checks both.
func maskThenRestore(t *testing.T, names privacy.Names, text, wantMasked, reply, wantRestored string) {
	t.Helper()
	m := privacy.NewMasker(names)
	if got := m.Mask(text); got != wantMasked {
		t.Errorf("Mask(%q) = %q, want %q", text, got, wantMasked)
	}
	if got := m.Restore(reply); got != wantRestored {
		t.Errorf("Restore(%q) = %q, want %q", reply, got, wantRestored)
	}
}

func TestMaskHidesEmailAddresses(t *testing.T) {
	maskEach(t, family, map[string]string{
		"Write to dana.parent+school@example.co.uk today.": "Write to [EMAIL_1] today.",
		"Max.Smith@school.org is his address":              "[EMAIL_1] is his address",
		"<mary@example.com>, or MARY@EXAMPLE.COM":          "<[EMAIL_1]>, or [EMAIL_1]",
	})
}

func TestMaskHidesPhoneNumbersInCommonFormats(t *testing.T) {
	for _, number := range []string{
		"555-123-4567", "(555) 123-4567", "(555)123-4567", "555.123.4567", "555 123 4567",
		"5551234567", "555-1234", "+1 555 123 4567", "+1-555-123-4567", "+15551234567",
		"+44 20 7946 0958", "+44 (0)20 7946 0958", "020 7946 0958", "07700 900123",
		"06 12 34 56 78", "+33 1 23 45 67 89",
	} {
		text := "Call me on " + number + ", after six."
		if got, want := privacy.NewMasker(family).Mask(text), "Call me on [PHONE_1], after six."; got != want {
			t.Errorf("Mask(%q) = %q, want %q", text, got, want)
		}
	}
}

// Numbers a conversation about learning is full of are not phone numbers.
func TestMaskLeavesOtherNumbers(t *testing.T) {
	for _, text := range []string{
		"The test is on 2024-05-01, or 01.05.2024, or 1/5/2024.",
		"The 2019-2020 school year was hard.",
		"She knows pi as 3.1415926 now.",
		"The town has 1234567 people, or 1,234,567.",
		"He scored 85 out of 100 at 10:30, pages 12-14.",
		"Order 12345678901234567 arrived.",
		"Her student number is ID5551234567.",
	} {
		if got := privacy.NewMasker(family).Mask(text); got != text {
			t.Errorf("Mask(%q) = %q, want it unchanged", text, got)
		}
	}
}

func TestMaskHidesStreetAddresses(t *testing.T) {
	maskEach(t, family, map[string]string{
		"We live at 42 Oak Street, near the park.":      "We live at [ADDRESS_1], near the park.",
		"Drop it at 7 Elm Ave.":                         "Drop it at [ADDRESS_1].",
		"221B Baker Street and 10 Downing St":           "[ADDRESS_1] and [ADDRESS_2]",
		"1600 Pennsylvania Avenue, 350 West 5th Avenue": "[ADDRESS_1], [ADDRESS_2]",
		// Conservative: lower-case streets and numbers followed by words.
		"We live at 42 oak street.":           "We live at 42 oak street.",
		"Max ran 5 laps down the road.":       "[LEARNER] ran 5 laps down the road.",
		"She has 3 Streets to learn by heart": "She has 3 Streets to learn by heart",
	})
}

// One value keeps one placeholder throughout a prompt, whichever text of it
// and however it is written; the next value of a kind gets the next number.
func TestPlaceholdersAreStableWithinAPrompt(t *testing.T) {
	m := privacy.NewMasker(family)
	first := m.Mask("Mary: dana@example.com, (555) 123-4567")
	second := m.Mask("Zoë and Mary: DANA@example.com, 555.123.4567, other@example.com")
	if first != "[PERSON_1]: [EMAIL_1], [PHONE_1]" {
		t.Errorf("first text masked as %q", first)
	}
	if second != "[PERSON_2] and [PERSON_1]: [EMAIL_1], [PHONE_1], [EMAIL_2]" {
		t.Errorf("second text masked as %q", second)
	}
	// Another prompt starts its own numbering.
	if got := privacy.NewMasker(family).Mask("Zoë"); got != "[PERSON_1]" {
		t.Errorf("a new masker numbers from 1, got %q", got)
	}
}

func TestRestoreUndoesMask(t *testing.T) {
	text := "Max and Mary Ann (mary.ann@example.com, +44 20 7946 0958) moved from 42 Oak Street to 7 Elm Ave; Zoë's number is 555-123-4567."
	m := privacy.NewMasker(family)
	masked := m.Mask(text)
	for _, hidden := range []string{"Max", "Mary", "Zoë", "example.com", "7946", "Oak", "Elm", "4567"} {
		if strings.Contains(masked, hidden) {
			t.Errorf("masked text still shows %q: %q", hidden, masked)
		}
	}
	if got := m.Restore(masked); got != text {
		t.Errorf("round trip:\n got %q\nwant %q", got, text)
	}
	// A reply uses the placeholders in its own words, in any case.
	if got, want := m.Restore("[learner] emails [EMAIL_1] about [Address_2]."), "Max emails mary.ann@example.com about 7 Elm Ave."; got != want {
		t.Errorf("Restore = %q, want %q", got, want)
	}
	// A name comes back as the facilitator saved it.
	if got := m.Restore(m.Mask("MAX")); got != "Max" {
		t.Errorf("MAX came back as %q", got)
	}
}

// A placeholder the model made up stands for nothing the service knows: it
// is left as it is.
func TestRestoreLeavesPlaceholdersItNeverGave(t *testing.T) {
	maskThenRestore(t, privacy.Names{Others: []string{"Mary"}}, "Mary called.", "[PERSON_1] called.",
		"[PERSON_1] and [PERSON_7] called [LEARNER] at [PHONE_1] or [EMAIL_].",
		"Mary and [PERSON_7] called [LEARNER] at [PHONE_1] or [EMAIL_].")
}

// A placeholder already in the data (a made-up one that was stored) is
// hidden like a value, so that it is not restored as someone else.
func TestPlaceholdersInTheDataAreHiddenToo(t *testing.T) {
	maskThenRestore(t, privacy.Names{Learner: "Max", Others: []string{"Mary"}},
		"Mary wrote about [PERSON_1] and [LEARNER].", "[PERSON_1] wrote about [PERSON_2] and [PERSON_3].",
		"[PERSON_2], [PERSON_3] and [PERSON_1]", "[PERSON_1], [LEARNER] and Mary")
}

func TestTurnsAreMaskedAsCopies(t *testing.T) {
	turns := []mentor.Turn{{Role: mentor.RoleUser, Content: "Max is sick", ID: "u1"}, {Role: mentor.RoleAssistant, Content: "Poor Max."}}
	masked := privacy.NewMasker(family).Turns(turns)
	if masked[0].Content != "[LEARNER] is sick" || masked[0].ID != "u1" || masked[1].Content != "Poor [LEARNER]." {
		t.Errorf("masked turns %+v", masked)
	}
	if turns[0].Content != "Max is sick" {
		t.Errorf("the turns given were changed: %+v", turns)
	}
}
