package mentor_test

import (
	"strings"
	"testing"

	"mentormemory/mentor"
)

// Only what the facilitator reports the learner said or did is the
// learner's breakthrough; their own "I get it" never is.
func TestABreakthroughIsOnlyWhatTheLearnerWasReportedToSayOrDo(t *testing.T) {
	for _, c := range []struct{ message, learner, want string }{
		// The learner's words, reported.
		{`Emma said "I get it now!" and smiled.`, "Emma", `Emma said "I get it now!" and smiled.`},
		{"We tried the pizza slices. Then Emma told me it finally makes sense!", "Emma", "Then Emma told me it finally makes sense!"},
		{"She said 'oh, I see' halfway through.", "Emma", "She said 'oh, I see' halfway through."},
		// The learner's deeds.
		{"Emma solved three long division problems on her own", "Emma", "Emma solved three long division problems on her own"},
		{"my son finally figured it out!", "", "my son finally figured it out!"},
		{"Max got all ten right on the quiz.", "Max", "Max got all ten right on the quiz."},
		{"Emma Rivera, after an hour, worked it out.", "Emma Rivera", "Emma Rivera, after an hour, worked it out."},
		// The facilitator's own words are theirs.
		{"Oh, I get it now!", "Emma", ""},
		{"That makes sense, thanks!", "Emma", ""},
		{"I finally figured out how to help Emma.", "Emma", ""},
		// Not the learner, or no breakthrough.
		{"Emma's teacher solved it for her.", "Emma", ""},
		{"Emma said she hates fractions.", "Emma", ""},
		{`Emma said "I don't get it"`, "Emma", ""},
		{"Emma still hasn't solved it.", "Emma", ""},
		{"She almost solved it!", "Emma", ""},
		{"Emma got it wrong again.", "Emma", ""},
		{"Emma cried all evening.", "Emma", ""},
	} {
		if got := mentor.LearnerBreakthrough(c.message, c.learner); got != c.want {
			t.Errorf("LearnerBreakthrough(%q, %q) = %q, want %q", c.message, c.learner, got, c.want)
		}
	}
}

// A long message (a pasted report, up to the chat's limit) that names the
// learner in every sentence is read within a post's transaction.
func BenchmarkAdvanceClosingReadsALongMessage(b *testing.B) {
	long := strings.Repeat("Emma said it. She said that Emma's page was done. ", 400)
	for b.Loop() {
		mentor.AdvanceClosing(mentor.ClosingState{}, []mentor.Turn{{Role: mentor.RoleUser, Content: long}}, "Emma Rivera")
	}
}
