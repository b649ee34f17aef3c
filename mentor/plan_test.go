package mentor

import (
	"slices"
	"strings"
	"testing"
)

func TestPlanRetrievalTriggers(t *testing.T) {
	ongoing := SessionState{Exchanges: 1, PreviousMessage: "Can we work on fractions with pizza slices?"}
	cases := []struct {
		name    string
		message string
		session SessionState
		deep    bool
		reason  string
	}{
		{"same topic, calm", "More fractions please, the pizza slices helped", ongoing, false, ReasonEveryTurn},
		{"emotional cue", "ugh these fractions are so frustrating", ongoing, true, ReasonEmotion + ": frustrated"},
		{"anxiety", "I'm stressed about the fractions test", ongoing, true, ReasonEmotion + ": anxious"},
		{"refers back", "Can we do fractions like we did before?", ongoing, true, ReasonRefersBack},
		{"last time", "What fractions trick did you show last time?", ongoing, true, ReasonRefersBack},
		{"topic changed", "My basketball team won the tournament game", ongoing, true, ReasonTopicChanged},
		{"fifth turn", "More fractions please", SessionState{Exchanges: 4, PreviousMessage: "fractions"}, true, ReasonNthTurn},
		{"sixth turn", "More fractions please", SessionState{Exchanges: 5, PreviousMessage: "fractions"}, false, ReasonEveryTurn},
		{"first message", "Hello", SessionState{}, true, ReasonFirstMessage},
		{"short message is no topic change", "ok", ongoing, false, ReasonEveryTurn},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := PlanRetrieval(c.message, c.session)
			if plan.Deep != c.deep || !slices.Contains(plan.Reasons, c.reason) {
				t.Fatalf("PlanRetrieval(%q) = deep %v, reasons %v; want deep %v with %q", c.message, plan.Deep, plan.Reasons, c.deep, c.reason)
			}
		})
	}
}

// A message refers back by what was said or done before, in this session
// or an earlier one; "before" alone, or words that merely look alike, do
// not.
func TestRefersBackIsToldByPhrasesAboutWhatWasSaid(t *testing.T) {
	cases := []struct {
		message string
		back    bool
	}{
		{"Like we said earlier, the volcano needs paint", true},
		{"As you mentioned, she likes maps", true},
		{"What did we try last time?", true},
		{"We talked about this before, right?", true},
		{"You said to keep it short", true},
		{"I mentioned her teacher once", true},
		{"Can we go back to the spelling list?", true},
		{"Remember the rocket book?", true},
		{"Previously she hated maths", true},
		{"She reads before bed", false},
		{"Emma finished the volcano diorama", false},
		{"The earliest bus is at seven", false},
		{"How do I help with fractions?", false},
	}
	for _, c := range cases {
		if got := RefersBack(c.message); got != c.back {
			t.Errorf("RefersBack(%q) = %v, want %v", c.message, got, c.back)
		}
	}
	if got := strings.Fields(WithoutBackReferences("Like we said earlier, the VOLCANO needs paint")); !slices.Equal(got, []string{"like", ",", "the", "volcano", "needs", "paint"}) {
		t.Errorf("WithoutBackReferences left %q", got)
	}
}

// A message's topic words are its words that say what it is about, as
// often as it says them: stopwords and short words out, plurals folded.
func TestTopicWordsKeepRepeatsAndFoldPlurals(t *testing.T) {
	got := TopicWords("The volcano dioramas: paint the volcano, it's a diorama!")
	if want := []string{"volcano", "diorama", "paint", "volcano", "diorama"}; !slices.Equal(got, want) {
		t.Errorf("TopicWords = %q, want %q", got, want)
	}
}

func TestEmotionsInWholeWords(t *testing.T) {
	if got := EmotionsIn("We lost the game, but I feel proud and a bit tired"); !slices.Equal(got, []string{"excited", "tired"}) {
		t.Fatalf("got %v", got)
	}
	// "hatred" is not "hate", "lostness" not "lost".
	if got := EmotionsIn("the character's hatred of the sea"); len(got) != 0 {
		t.Fatalf("partial words matched: %v", got)
	}
}

func TestClosingFollowsTheSession(t *testing.T) {
	var c ClosingState
	c = AdvanceClosing(c, []Turn{
		{Role: RoleUser, Content: "I'm nervous about the test"},
		{Role: RoleAssistant, Content: "Let's go slowly. Next time we'll review graphs."},
	}, "Alex")
	c = AdvanceClosing(c, []Turn{
		{Role: RoleUser, Content: "ugh!"},
		{Role: RoleAssistant, Content: "Take a breath."},
		{Role: RoleUser, Content: "Oh, I get it now!"},
		{Role: RoleAssistant, Content: "Yes!"},
	}, "Alex")
	if got := strings.Join(c.EmotionalArc, " → "); got != "anxious → frustrated → excited" {
		t.Fatalf("arc %q", got)
	}
	if !slices.Equal(c.KeyMoments, []string{"Oh, I get it now!"}) {
		t.Fatalf("a frustrated exclamation is no key moment: %v", c.KeyMoments)
	}
	if !slices.Equal(c.NextSessionHooks, []string{"Next time we'll review graphs."}) || c.Exchanges != 3 {
		t.Fatalf("hooks %v, exchanges %d", c.NextSessionHooks, c.Exchanges)
	}
	if !strings.Contains(c.GoodbyeLine, "Alex") || !strings.Contains(c.GoodbyeLine, "review graphs") {
		t.Fatalf("goodbye line %q", c.GoodbyeLine)
	}
	c = c.AddLearnt("Alex is anxious before tests", "Alex is anxious before tests")
	if len(c.NewMemories) != 1 {
		t.Fatalf("learnt memories repeat: %v", c.NewMemories)
	}
}
