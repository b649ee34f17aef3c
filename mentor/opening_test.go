package mentor_test

import (
	"testing"
	"time"

	"mentormemory/mentor"
)

// The opening speaks to the facilitator, who is the one in the chat, about
// the learner: it never greets the learner, and it quotes a breakthrough
// only as the facilitator reported it, or as a memory records it.
func TestTheOpeningSpeaksToTheFacilitatorAboutTheLearner(t *testing.T) {
	now := time.Date(2026, 3, 5, 18, 0, 0, 0, time.UTC)
	ended, earlier := "s2", "s1"
	closing := mentor.ClosingState{SessionID: ended, Exchanges: 4, EmotionalArc: []string{"frustrated", "excited"},
		KeyMoments: []string{`Emma said "I get it now!"`}, NextSessionHooks: []string{"Next time we'll try remainders."}}
	known := []mentor.LearnerMemory{
		{Type: mentor.Academic, Content: "Emma divided by chunking on her own", SessionID: &ended,
			Metadata: mentor.Metadata{"topic": "long division", "valence": "positive"}},
		{Type: mentor.Academic, Content: "Emma struggles with fractions", SessionID: &earlier,
			Metadata: mentor.Metadata{"topic": "fractions", "resolution": "unresolved"}},
	}
	o := mentor.BuildOpening(closing, "They worked on division.", known, "Emma", now)
	if want := `A breakthrough last time: Emma said "I get it now!"`; o.WelcomeHook != want {
		t.Errorf("welcome hook %q, want %q", o.WelcomeHook, want)
	}
	const opener = "Last time you and I worked on long division with Emma. Shall we pick up where we left off?"
	if got := o.Greet("Dana").SuggestedOpener; got != "Welcome back, Dana. "+opener {
		t.Errorf("opener for Dana %q", got)
	}
	if got := o.Greet("").SuggestedOpener; got != "Welcome back. "+opener {
		t.Errorf("opener for a facilitator of no known name %q", got)
	}

	// With no breakthrough reported, the one a memory of the session
	// records; an ending in frustration is asked about.
	closing.KeyMoments, closing.EmotionalArc = nil, []string{"excited", "frustrated"}
	o = mentor.BuildOpening(closing, "", known, "Emma", now)
	if want := "A breakthrough last time: Emma divided by chunking on her own."; o.WelcomeHook != want {
		t.Errorf("welcome hook %q, want %q", o.WelcomeHook, want)
	}
	if want := "Welcome back. Last time you and I worked on long division with Emma. The last session had its frustrated moments; how have things been since?"; o.SuggestedOpener != want {
		t.Errorf("opener %q, want %q", o.SuggestedOpener, want)
	}
	// Nothing learnt, nothing left: the learner is named in the question.
	o = mentor.BuildOpening(mentor.ClosingState{SessionID: ended, EmotionalArc: []string{"sad"}}, "", nil, "Emma", now)
	if want := "Welcome back, Dana. The last session with Emma had its sad moments; how have things been since?"; o.Greet("Dana").SuggestedOpener != want {
		t.Errorf("opener %q, want %q", o.Greet("Dana").SuggestedOpener, want)
	}
	// A general conversation names nobody but the facilitator.
	o = mentor.BuildOpening(mentor.ClosingState{SessionID: ended}, "", nil, "", now)
	if want := "Welcome back, Dana. What's on your mind today?"; o.Greet("Dana").SuggestedOpener != want || o.WelcomeHook != "" {
		t.Errorf("general opener %q, hook %q", o.Greet("Dana").SuggestedOpener, o.WelcomeHook)
	}
	// An opener stored before openings spoke to the facilitator is left
	// as it was, not greeted twice.
	old := mentor.Opening{SuggestedOpener: "Hi Emma! Good to see you again."}
	if got := old.Greet("Dana").SuggestedOpener; got != old.SuggestedOpener {
		t.Errorf("an old opener became %q", got)
	}
}

// A thread's day passes by the facilitator's calendar: "a test on Friday"
// said on Thursday evening in New York (Friday already in UTC) is still
// ahead on Friday evening there, and has passed by Saturday morning.
func TestAThreadsDayPassesInTheFacilitatorsTimeZone(t *testing.T) {
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	thursdayEvening := time.Date(2026, 11, 19, 20, 0, 0, 0, newYork).UTC()
	o := mentor.Opening{ComputedAt: thursdayEvening, UnfinishedThreads: []string{"Emma has a spelling test on Friday"}}
	if got := o.ForDay(time.Date(2026, 11, 20, 21, 0, 0, 0, newYork)).UnfinishedThreads; len(got) != 1 {
		t.Errorf("on Friday evening in New York the test is today, yet the thread went: %v", got)
	}
	if got := o.ForDay(time.Date(2026, 11, 21, 9, 0, 0, 0, newYork)).UnfinishedThreads; len(got) != 0 {
		t.Errorf("on Saturday the test has passed, yet the thread stays: %v", got)
	}
	// Read in UTC, Friday evening in New York is Saturday already.
	if got := o.ForDay(time.Date(2026, 11, 20, 21, 0, 0, 0, newYork).UTC()).UnfinishedThreads; len(got) != 0 {
		t.Errorf("in UTC it is Saturday, yet the thread stays: %v", got)
	}
}
