package summarizer

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"mentormemory/mentor"
)

func user(s string) mentor.Turn      { return mentor.Turn{Role: mentor.RoleUser, Content: s} }
func assistant(s string) mentor.Turn { return mentor.Turn{Role: mentor.RoleAssistant, Content: s} }

// mathsConversation is a realistic exchange about one learner.
func mathsConversation() []mentor.Turn {
	return []mentor.Turn{
		user("Hi Mr. Mentor! My daughter Maya is 9 and in fourth grade."),
		assistant("Hello! I'd love to hear about Maya. What is on your mind?"),
		user("She gets so frustrated with long division that she cries during homework."),
		assistant("Long division combines several skills at once, so many kids find it hard.\n1. **Break it down**: practise each step of long division separately.\n2. Use graph paper so the columns stay aligned.\n3. Praise her effort rather than the right answer."),
		user("Okay, I will try the graph paper tonight."),
		assistant("Great plan. Let me know how it goes next week."),
	}
}

func summarize(t *testing.T, req mentor.SummaryRequest) string {
	t.Helper()
	got, err := NewOffline().Summarize(context.Background(), req)
	if err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	if n := countWords(got); n > mentor.SummaryMaxWords {
		t.Fatalf("summary has %d words, more than %d:\n%s", n, mentor.SummaryMaxWords, got)
	}
	return got
}

// part returns the lines of one labelled part of an offline summary: the
// text after "Label:" on its line and the bullets under it.
func part(summary, label string) string {
	var out []string
	in := false
	for _, line := range strings.Split(summary, "\n") {
		switch {
		case strings.HasPrefix(line, label):
			in = true
			if rest := strings.TrimSpace(strings.TrimPrefix(line, label)); rest != "" {
				out = append(out, rest)
			}
		case in && strings.HasPrefix(line, bullet):
			out = append(out, line)
		default:
			in = false
		}
	}
	return strings.Join(out, "\n")
}

func TestOfflineName(t *testing.T) {
	if got := NewOffline().Name(); got != "offline" {
		t.Fatalf("Name() = %q, want offline", got)
	}
}

func TestOfflineEmpty(t *testing.T) {
	if got := summarize(t, mentor.SummaryRequest{}); got != "" {
		t.Errorf("no turns, no previous: got %q, want empty", got)
	}
	if got := summarize(t, mentor.SummaryRequest{Previous: "Maya likes maps.\n"}); got != "Maya likes maps." {
		t.Errorf("no turns: got %q, want the previous summary unchanged", got)
	}
}

func TestOfflineNonEmptyForTrivialTurns(t *testing.T) {
	got := summarize(t, mentor.SummaryRequest{Turns: []mentor.Turn{user("ok"), assistant("Thanks!")}})
	if strings.TrimSpace(got) == "" {
		t.Fatal("summary of non-empty turns is empty")
	}
}

func TestOfflineFullSummaryParts(t *testing.T) {
	got := summarize(t, mentor.SummaryRequest{Turns: mathsConversation(), LearnerName: "Maya"})
	checks := []struct{ label, want string }{
		{labelLearner, "Maya"},
		{labelTopics, "long division"},
		{sectionLabels[secConcerns], "frustrated with long division"},
		{sectionLabels[secAdvice], "graph paper"},
		{sectionLabels[secActions], "I will try the graph paper tonight"},
		{labelTone, "frustrated"},
	}
	for _, c := range checks {
		if !strings.Contains(part(got, c.label), c.want) {
			t.Errorf("part %q lacks %q:\n%s", c.label, c.want, got)
		}
	}
	// The mentor's greeting carries nothing and must not crowd out advice.
	if strings.Contains(got, "I'd love to hear") {
		t.Errorf("summary keeps an empty pleasantry:\n%s", got)
	}
	general := summarize(t, mentor.SummaryRequest{Turns: mathsConversation()})
	if !strings.Contains(part(general, labelLearner), "general conversation") {
		t.Errorf("summary without a learner does not say general conversation:\n%s", general)
	}
}

// A distinctive concern is kept even when more facilitator worries than
// there are concern slots compete with it: recurring words and strong cues
// must rank it first.
func TestOfflineKeepsDistinctConcern(t *testing.T) {
	var turns []mentor.Turn
	fillers := []string{
		"We went to the park on Saturday with her cousins.",
		"Her favourite colour is green and she likes painting.",
		"It is hard to find parking near the school gate.",
		"She had pasta for lunch and an apple after school.",
		"The neighbour's dog is a problem when it barks at night.",
		"Her grandmother visits on Sundays and brings comics.",
		"I had a difficult week at work with a new project.",
		"Traffic was a real problem on the way to the dentist.",
		"My phone has an issue with its charger again.",
		"We are repainting the kitchen this month.",
	}
	for i, f := range fillers {
		turns = append(turns, user(f), assistant(fmt.Sprintf("Thanks for sharing that, it helps me picture day %d.", i)))
		if i == 4 {
			turns = append(turns,
				user("Maya is frustrated with long division and cries at every division worksheet."),
				assistant("Division worksheets can feel endless; short division sessions with breaks help."))
		}
	}
	got := summarize(t, mentor.SummaryRequest{Turns: turns, LearnerName: "Maya"})
	if !strings.Contains(part(got, sectionLabels[secConcerns]), "frustrated with long division") {
		t.Errorf("the concern about long division is not among the concerns:\n%s", got)
	}
}

func TestOfflineDeterministic(t *testing.T) {
	// Many words with equal counts, so any dependence on map order would
	// show up as a different choice of topics or sentences.
	var turns []mentor.Turn
	for i := 0; i < 30; i++ {
		turns = append(turns,
			user(fmt.Sprintf("Alpha%d beta%d gamma%d worries about delta%d and epsilon%d.", i, i, i, i, i)),
			assistant(fmt.Sprintf("Try zeta%d with eta%d, and praise theta%d.", i%5, i%7, i%3)))
	}
	turns = append(turns, mathsConversation()...)
	req := mentor.SummaryRequest{Turns: turns, LearnerName: "Maya"}
	first := summarize(t, req)
	incr := summarize(t, mentor.SummaryRequest{Previous: first, Turns: mathsConversation()[:2], LearnerName: "Maya"})
	for i := 0; i < 20; i++ {
		if got := summarize(t, req); got != first {
			t.Fatalf("run %d differs:\n%s\n--- first ---\n%s", i, got, first)
		}
		if got := summarize(t, mentor.SummaryRequest{Previous: first, Turns: mathsConversation()[:2], LearnerName: "Maya"}); got != incr {
			t.Fatalf("incremental run %d differs:\n%s\n--- first ---\n%s", i, got, incr)
		}
	}
}

func TestOfflineLongInputWithinLimit(t *testing.T) {
	var turns []mentor.Turn
	for i := 0; i < 200; i++ {
		if i%2 == 0 {
			turns = append(turns, user(fmt.Sprintf(
				"On day %d I noticed that she struggled with spelling list %d and worried about the quiz on chapter %d, "+
					"which made the whole evening tense for everyone in the house including her little brother.", i, i, i)))
		} else {
			turns = append(turns, assistant(fmt.Sprintf(
				"For list %d, try splitting the words into groups of three and practise each group for five minutes. "+
					"You could also make a game of it with a timer. Remember to celebrate small wins on day %d.", i, i)))
		}
	}
	// One turn pasted as a single 3000-word run with no punctuation.
	turns = append(turns, user(strings.Repeat("homework worries keep growing ", 750)))
	got := summarize(t, mentor.SummaryRequest{Turns: turns, LearnerName: "Sam"})
	if countWords(got) < 50 {
		t.Errorf("long input produced a near-empty summary:\n%s", got)
	}
}

func TestOfflineIncrementalFoldsInNewTurns(t *testing.T) {
	prev := summarize(t, mentor.SummaryRequest{Turns: mathsConversation(), LearnerName: "Maya"})
	got := summarize(t, mentor.SummaryRequest{
		Previous:    prev,
		LearnerName: "Maya",
		Turns: []mentor.Turn{
			user("Now she also refuses to read at bedtime and gets upset about her reading log."),
			assistant("Consider letting her choose the bedtime books and reading the first page together."),
		},
	})
	for _, want := range []string{"long division", "graph paper"} {
		if !strings.Contains(got, want) {
			t.Errorf("update lost %q from the previous summary although there is room:\n%s", want, got)
		}
	}
	if !strings.Contains(part(got, sectionLabels[secConcerns]), "refuses to read at bedtime") {
		t.Errorf("update lacks the new concern:\n%s", got)
	}
	if !strings.Contains(part(got, sectionLabels[secAdvice]), "choose the bedtime books") {
		t.Errorf("update lacks the new advice:\n%s", got)
	}
	if tone := part(got, labelTone); !strings.Contains(tone, "upset") || !strings.Contains(tone, "frustrated") {
		t.Errorf("tone %q should lead with the new feeling and keep the earlier one", tone)
	}
}

// A previous summary written by the model (free prose) is kept as notes.
func TestOfflineIncrementalKeepsForeignPrevious(t *testing.T) {
	prev := "Maya loves dinosaurs and volcanoes. She is in second grade and reads well above her level."
	got := summarize(t, mentor.SummaryRequest{Previous: prev, LearnerName: "Maya", Turns: []mentor.Turn{
		user("She is anxious about the swimming lessons starting next month."),
	}})
	for _, want := range []string{"dinosaurs and volcanoes", "swimming lessons"} {
		if !strings.Contains(got, want) {
			t.Errorf("update lacks %q:\n%s", want, got)
		}
	}
}

// When the budget is tight the oldest points go first: what survives of
// each part of the previous summary is always its most recent end, and the
// new turn's point is always there.
func TestOfflineIncrementalDropsOldestFirst(t *testing.T) {
	long := strings.Repeat(" with many more words of detail", 4)
	var b strings.Builder
	b.WriteString("Learner: Maya\nTopics: reading, maths\n")
	for sec := secContext; sec < numSections; sec++ {
		b.WriteString(sectionLabels[sec] + "\n")
		for i := 1; i <= maxPoints; i++ {
			fmt.Fprintf(&b, "- Old point s%dp%d about the term%s.\n", sec, i, long)
		}
	}
	b.WriteString("Tone: worried")
	prev := b.String()
	if countWords(prev) <= mentor.SummaryMaxWords {
		t.Fatalf("test setup: previous summary has only %d words", countWords(prev))
	}
	got := summarize(t, mentor.SummaryRequest{Previous: prev, LearnerName: "Maya", Turns: []mentor.Turn{
		user("She is scared of the spelling bee on Friday."),
	}})
	if !strings.Contains(got, "scared of the spelling bee") {
		t.Errorf("the new point was dropped:\n%s", got)
	}
	kept := 0
	for sec := secContext; sec < numSections; sec++ {
		seenKept := false
		for i := 1; i <= maxPoints; i++ {
			has := strings.Contains(got, fmt.Sprintf("s%dp%d ", sec, i))
			if seenKept && !has {
				t.Errorf("section %d kept an older point but dropped the newer p%d:\n%s", sec, i, got)
			}
			if has {
				seenKept = true
				kept++
			}
		}
	}
	if kept == 0 {
		t.Errorf("no previous point kept although there was room for some:\n%s", got)
	}
}

// Rolling many updates keeps the summary within the limit, always holds the
// latest point, and eventually forgets the first one.
func TestOfflineRollingUpdates(t *testing.T) {
	summary := ""
	for i := 0; i < 40; i++ {
		marker := fmt.Sprintf("topic%02d", i)
		summary = summarize(t, mentor.SummaryRequest{Previous: summary, LearnerName: "Ada", Turns: []mentor.Turn{
			user(fmt.Sprintf("This week she struggled with %s in her science homework and felt stuck.", marker)),
			assistant(fmt.Sprintf("Try a short daily practice on %s and review it together on Sunday.", marker)),
		}})
		if !strings.Contains(summary, marker) {
			t.Fatalf("update %d lacks its own point %s:\n%s", i, marker, summary)
		}
		if i > 0 && !strings.Contains(summary, fmt.Sprintf("topic%02d", i-1)) {
			t.Fatalf("update %d already dropped the previous update's point although there is room:\n%s", i, summary)
		}
	}
	if strings.Contains(summary, "topic00") {
		t.Errorf("after 40 updates the first point is still there:\n%s", summary)
	}
}

func TestOfflineTone(t *testing.T) {
	cases := []struct {
		name  string
		turns []mentor.Turn
		want  []string
	}{
		{"feelings", []mentor.Turn{user("I'm so worried and honestly overwhelmed by her reading."), assistant("Let's take it one step at a time.")}, []string{"worried", "overwhelmed"}},
		{"none", []mentor.Turn{user("She reads two chapters every evening before bed."), assistant("Reading every evening builds fluency.")}, []string{toneNeutral}},
		{"negated", []mentor.Turn{user("I am not worried about her maths grades at all.")}, []string{toneNeutral}},
		{"mentor pleasantries", []mentor.Turn{user("She finished the science project on volcanoes."), assistant("I'm so happy to help and glad to hear it!")}, []string{toneNeutral}},
		{"most frequent first", []mentor.Turn{user("She was excited about the trip. Then anxious on the bus, anxious at the museum, anxious at lunch.")}, []string{"anxious, excited"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := summarize(t, mentor.SummaryRequest{Turns: c.turns})
			tone := part(got, labelTone)
			for _, w := range c.want {
				if !strings.Contains(tone, w) {
					t.Errorf("tone %q lacks %q:\n%s", tone, w, got)
				}
			}
			if c.want[0] == toneNeutral && tone != toneNeutral {
				t.Errorf("tone = %q, want %q", tone, toneNeutral)
			}
		})
	}
}

// Words that recur across turns weigh more: of several equally worded
// worries, the one about what the whole conversation returns to is kept.
func TestOfflineFavoursRecurringWords(t *testing.T) {
	turns := []mentor.Turn{
		user("She is worried about swimming lessons."),
		user("She is worried about piano recitals."),
		user("She is worried about football trials."),
		user("She is worried about drama auditions."),
		user("She is worried about chess tournaments."),
		// Last, so that without the weighting the order would push it out.
		user("She is worried about fractions homework."),
		assistant("Fractions homework goes better with pizza slices."),
		assistant("Short fractions homework sessions keep it light."),
	}
	got := summarize(t, mentor.SummaryRequest{Turns: turns})
	if !strings.Contains(part(got, sectionLabels[secConcerns]), "fractions homework") {
		t.Errorf("the worry the conversation keeps returning to is not among the concerns:\n%s", got)
	}
}

// A worry repeated in many turns takes one slot, leaving room for others.
func TestOfflineSkipsNearDuplicates(t *testing.T) {
	var turns []mentor.Turn
	for i := 1; i <= 6; i++ {
		turns = append(turns, user(fmt.Sprintf("She cried over her maths homework again on day %d.", i)))
	}
	turns = append(turns, user("She is scared of the dark."))
	got := summarize(t, mentor.SummaryRequest{Turns: turns})
	concerns := part(got, sectionLabels[secConcerns])
	if n := strings.Count(concerns, "cried over her maths homework"); n != 1 {
		t.Errorf("the repeated worry appears %d times, want once:\n%s", n, got)
	}
	if !strings.Contains(concerns, "scared of the dark") {
		t.Errorf("repeats crowded out another concern:\n%s", got)
	}
}

// A previous summary that is over the limit, or holds a runaway line, is
// brought back within it without flattening the summary's structure.
func TestOfflineOversizedPrevious(t *testing.T) {
	prev := "Topics: " + strings.Repeat("endless topic words ", 200) + "\n" +
		strings.Repeat("A long paragraph about reading and maths progress. ", 80)
	for _, turns := range [][]mentor.Turn{nil, {user("She is anxious about the class play.")}} {
		got := summarize(t, mentor.SummaryRequest{Previous: prev, Turns: turns})
		if !strings.HasPrefix(got, labelLearner) || !strings.Contains(got, "\n"+labelTone) {
			t.Errorf("summary lost its labelled lines (%d turns):\n%s", len(turns), got)
		}
	}
}
