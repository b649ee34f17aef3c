package mentor_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"mentormemory/mentor"
)

func TestAnIdleSessionEndsBeforeNewTurns(t *testing.T) {
	idle := mentor.CurrentSession{ID: "s-1", Idle: true}
	if !idle.EndsBefore([]mentor.Turn{user("Back again")}) {
		t.Error("new turns joined a session idle past the limit")
	}
	if idle.EndsBefore(nil) {
		t.Error("a post with nothing new ended the idle session")
	}
	if (mentor.CurrentSession{ID: "s-1"}).EndsBefore([]mentor.Turn{user("Still here")}) {
		t.Error("a session in use ended")
	}
	if (mentor.CurrentSession{}).EndsBefore([]mentor.Turn{user("Hello")}) {
		t.Error("no session to end, yet one ended")
	}
}

func TestNewTurnsStartASessionWhenNoneIsLive(t *testing.T) {
	write := mentor.AdvanceSession(mentor.CurrentSession{}, []mentor.Turn{
		user("I'm nervous about the test"), reply("Next time we'll review graphs."),
	}, "Alex", func() string { return "s-new" })
	if write.ID != "s-new" || !write.Started || write.Closing.SessionID != "s-new" {
		t.Fatalf("write %+v, want session s-new started", write)
	}
	if write.Closing.Exchanges != 1 || !slices.Equal(write.Closing.EmotionalArc, []string{"anxious"}) ||
		!slices.Equal(write.Closing.NextSessionHooks, []string{"Next time we'll review graphs."}) {
		t.Fatalf("closing %+v, want the exchange folded in", write.Closing)
	}
	if write.LastExchange != "I'm nervous about the test\nNext time we'll review graphs." {
		t.Fatalf("last exchange %q, want both turns", write.LastExchange)
	}
}

func TestNewTurnsAdvanceTheLiveSession(t *testing.T) {
	live := mentor.CurrentSession{ID: "s-1", Closing: mentor.ClosingState{
		SessionID: "s-1", Exchanges: 3, EmotionalArc: []string{"anxious"},
	}}
	write := mentor.AdvanceSession(live, []mentor.Turn{user("Alex read it twice and said it makes sense now!"), reply("Yes!")}, "Alex",
		func() string { t.Fatal("the live session was given a new id"); return "" })
	if write.ID != "s-1" || write.Started {
		t.Fatalf("write %+v, want session s-1 updated", write)
	}
	if write.Closing.Exchanges != 4 || !slices.Equal(write.Closing.EmotionalArc, []string{"anxious", "excited"}) ||
		!slices.Equal(write.Closing.KeyMoments, []string{"Alex read it twice and said it makes sense now!"}) {
		t.Fatalf("closing %+v, want the fourth exchange folded into the first three", write.Closing)
	}
}

// A post of a long history at once counts every question as an exchange
// but reads only its latest turns for feelings, moments and hooks.
func TestALongPostIsReadFromItsLatestTurns(t *testing.T) {
	var turns []mentor.Turn
	for range 245 {
		turns = append(turns, user("I'm nervous about the test"), reply("Next time we'll review graphs."))
	}
	for range 4 {
		turns = append(turns, user("Fine"), reply("Good."))
	}
	turns = append(turns, user("Oh, I get it now!"), reply("Yes!"))
	write := mentor.AdvanceSession(mentor.CurrentSession{ID: "s-1"}, turns, "Alex", nil)
	if write.Closing.Exchanges != 250 {
		t.Fatalf("%d exchanges, want all 250 questions counted", write.Closing.Exchanges)
	}
	if !slices.Equal(write.Closing.EmotionalArc, []string{"excited"}) || len(write.Closing.NextSessionHooks) != 0 {
		t.Fatalf("closing %+v: want only the latest turns read (excited, no hooks)", write.Closing)
	}
}

func TestTheLastExchangeKeepsItsEnd(t *testing.T) {
	long := strings.Repeat("é", mentor.MaxPreviousExchangeChars) + "the end"
	write := mentor.AdvanceSession(mentor.CurrentSession{ID: "s-1"}, []mentor.Turn{user(long)}, "", nil)
	want := strings.Repeat("é", mentor.MaxPreviousExchangeChars-len("the end")) + "the end"
	if write.LastExchange != want {
		t.Fatalf("last exchange of %d characters ends %q; want the last %d characters",
			len([]rune(write.LastExchange)), write.LastExchange[len(write.LastExchange)-10:], mentor.MaxPreviousExchangeChars)
	}
}

// A stored closing state that cannot be read (the row is reachable through
// Supabase's Data API) starts afresh instead of failing whoever reads it.
func TestUnreadableClosingStateStartsAfresh(t *testing.T) {
	for _, raw := range []string{`{"exchanges": "many"}`, `{"emotional_arc": "sad"}`, `[1, 2]`, `"x"`} {
		state := mentor.ClosingState{Exchanges: 3}
		if err := json.Unmarshal([]byte(raw), &state); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
		if state.Exchanges != 0 || state.EmotionalArc != nil {
			t.Errorf("%s read as %+v, want a fresh state", raw, state)
		}
	}
	var state mentor.ClosingState
	if err := json.Unmarshal([]byte(`{"session_id": "s", "exchanges": 2, "emotional_arc": ["anxious", "excited"]}`), &state); err != nil ||
		state.SessionID != "s" || state.Exchanges != 2 || len(state.EmotionalArc) != 2 {
		t.Fatalf("a sound state must read as written: %+v %v", state, err)
	}
}

// TestEveryKindOfHookIsFound checks each form of what the mentor leaves for
// the next session, in any case, among sentences that leave none: the
// turns that cannot hold one are skipped before their sentences are read,
// and none that can is.
func TestEveryKindOfHookIsFound(t *testing.T) {
	hooks := []string{"NEXT TIME bring the atlas.", "We start fractions next session.", "See you Next Week.",
		"TOMORROW read a chapter.", "We'll try the puzzle.", "WE'LL LOOK at maps.", "Let's pick up the story next."}
	for _, hook := range hooks {
		write := mentor.AdvanceSession(mentor.CurrentSession{}, []mentor.Turn{
			user("How did it go?"), reply("It went well. " + hook + " Good night!"),
		}, "Alex", func() string { return "s-1" })
		if !slices.Equal(write.Closing.NextSessionHooks, []string{hook}) {
			t.Errorf("hooks %q, want %q", write.Closing.NextSessionHooks, hook)
		}
	}
	write := mentor.AdvanceSession(mentor.CurrentSession{}, []mentor.Turn{
		user("How did it go?"), reply("It went well. The atlas helped. Good night!"),
	}, "Alex", func() string { return "s-1" })
	if len(write.Closing.NextSessionHooks) != 0 {
		t.Errorf("hooks %q in a turn that leaves none", write.Closing.NextSessionHooks)
	}
}
