package counselor

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"mentormemory/mentor"
	"mentormemory/tokens"
)

// session is n exchanges about homework, each a facilitator's turn and a
// reply naming its number.
func session(n int) []mentor.Turn {
	var turns []mentor.Turn
	for i := range n {
		turns = append(turns,
			mentor.Turn{Role: mentor.RoleUser, Content: fmt.Sprintf("Question %d: how long should homework take tonight?", i)},
			mentor.Turn{Role: mentor.RoleAssistant, Content: fmt.Sprintf("Answer %d: keep homework to twenty minutes with a break.", i)})
	}
	return turns
}

// memory is a block of recalled memories with the given scores; each
// memory's id and text name its score.
func memory(name string, scores ...float64) memoryBlock {
	b := memoryBlock{name: name, title: strings.ToUpper(name), end: "END " + strings.ToUpper(name)}
	for _, s := range scores {
		id := fmt.Sprintf("%s-%.1f", name, s)
		b.items = append(b.items, remembered{text: "- remembered " + id, score: s,
			sources: []mentor.ContextSource{{Kind: mentor.ContextMemory, ID: id, Block: name}}})
	}
	return b
}

// checkSums checks that the blocks add up to the total and that the
// total is the model's whole request: the system prompt, the turns and the
// message, as counted.
func checkSums(t *testing.T, a assembled) {
	t.Helper()
	sum := 0
	for _, n := range a.tokens.Blocks {
		sum += n
	}
	if sum != a.tokens.Total {
		t.Errorf("the blocks add up to %d, the total is %d", sum, a.tokens.Total)
	}
	sent := tokens.Count(a.system) + messageOverhead + replyPriming + toolTokens() + tokens.Count(a.message) + messageOverhead
	for _, turn := range a.conversation {
		sent += tokens.Count(turn.Content) + messageOverhead
	}
	// Counted block by block, a boundary may merge or split a token.
	if diff := sent - a.tokens.Total; diff < -4 || diff > 4 {
		t.Errorf("the request counts %d tokens, the account %d", sent, a.tokens.Total)
	}
}

func TestExchangesAreATurnOfTheFacilitatorsAndTheRepliesAfterIt(t *testing.T) {
	user := func(s string) mentor.Turn { return mentor.Turn{Role: mentor.RoleUser, Content: s} }
	mentorSays := func(s string) mentor.Turn { return mentor.Turn{Role: mentor.RoleAssistant, Content: s} }
	got := exchangesOf([]mentor.Turn{mentorSays("Welcome back"), user("a"), mentorSays("b"), mentorSays("c"), user("d"), user("e"), mentorSays("f")})
	want := [][]string{{"Welcome back"}, {"a", "b", "c"}, {"d"}, {"e", "f"}}
	if len(got) != len(want) {
		t.Fatalf("%d exchanges, want %d: %v", len(got), len(want), got)
	}
	for i, e := range got {
		var contents []string
		for _, t := range e {
			contents = append(contents, t.Content)
		}
		if !slices.Equal(contents, want[i]) {
			t.Errorf("exchange %d = %q, want %q", i, contents, want[i])
		}
	}
}

// Within a budget that holds them, every turn and every memory goes, and
// there is no earlier block.
func TestEverythingGoesWithinABudgetThatHoldsIt(t *testing.T) {
	parts := contextParts{instructions: persona, pinned: "\n\nThis session is a general conversation.",
		memory: []memoryBlock{memory(blockMemories, 0.9, 0.5)}, history: session(3), message: "And on weekends?"}
	a := assemble(DefaultContextTokens, parts)
	checkSums(t, a)
	if len(a.conversation) != 6 || a.tokens.EvictedExchanges != 0 || a.tokens.Blocks[blockEarlier] != 0 || strings.Contains(a.system, "EARLIER") {
		t.Fatalf("a short session should go whole: %d turns, %+v", len(a.conversation), a.tokens)
	}
	if len(a.used) != 2 || len(a.tokens.LeftOut) != 0 || a.tokens.Total > DefaultContextTokens {
		t.Fatalf("every memory should go: %+v", a.tokens)
	}
	if a.message != "And on weekends?" || !strings.HasPrefix(a.system, persona) {
		t.Fatalf("the persona and the message go first and last")
	}
}

// A session longer than the budget loses its oldest exchanges, whole; the
// newest stay, in order, and the earlier block says how many left.
func TestTheOldestExchangesLeaveWholeAndTheNewestStay(t *testing.T) {
	history := session(300)
	const budget = 4_000
	a := assemble(budget, contextParts{instructions: persona, history: history, message: "What about reading?"})
	checkSums(t, a)
	if a.tokens.Total > budget {
		t.Fatalf("the context takes %d tokens, over its budget of %d", a.tokens.Total, budget)
	}
	kept := len(a.conversation)
	if kept == 0 || kept%2 != 0 || a.tokens.EvictedExchanges != 300-kept/2 {
		t.Fatalf("%d turns kept, %d exchanges evicted: exchanges leave whole", kept, a.tokens.EvictedExchanges)
	}
	if !slices.Equal(a.conversation, history[len(history)-kept:]) {
		t.Fatal("the kept turns should be the newest, in order")
	}
	note := fmt.Sprintf("The session's first %d exchanges are not shown here", a.tokens.EvictedExchanges)
	if !strings.Contains(a.system, note) || a.tokens.BroughtBack != 0 {
		t.Fatalf("the earlier block should say how many exchanges left:\n%s", a.system)
	}
	// One more exchange would not have fitted.
	next := tokens.Count(history[len(history)-kept-2].Content) + tokens.Count(history[len(history)-kept-1].Content) + 2*messageOverhead
	if a.tokens.Total+next <= budget {
		t.Errorf("an exchange of %d tokens was evicted with %d tokens to spare", next, budget-a.tokens.Total)
	}
}

// When memory alone is over the budget it gives way in a set order:
// recalled memories lowest scored first, then emotional patterns, the
// opening, the profile; the pinned facts and the message always stay, and
// what left is listed.
func TestMemoryGivesWayInItsOrderWhenItAloneIsOverTheBudget(t *testing.T) {
	long := strings.Repeat("She likes maps and drawing rivers. ", 60) // about 500 tokens
	profile := memoryBlock{name: blockProfile, title: "LEARNER PROFILE", end: "END LEARNER PROFILE",
		items: []remembered{{text: long, sources: []mentor.ContextSource{{Kind: mentor.ContextMemory, ID: "p1", Block: blockProfile}}}}}
	opening := memoryBlock{name: blockOpening, title: "SESSION OPENING", end: "END SESSION OPENING",
		items: []remembered{{text: "Welcome hook: " + long, sources: []mentor.ContextSource{{Kind: mentor.ContextSession, ID: "s1", Block: blockOpening}}}}}
	parts := contextParts{instructions: persona, pinned: "\n\nThis session is about one learner, Emma.",
		memory:  []memoryBlock{profile, opening, memory(blockMemories, 0.2, 0.9, 0.5), memory(blockEmotional, 0.7)},
		history: session(2), message: "How is she doing?"}
	full := assemble(DefaultContextTokens, parts)
	fixed := full.tokens.Blocks[blockInstructions] + full.tokens.Blocks[blockTools] + full.tokens.Blocks[blockPinned] + full.tokens.Blocks[blockMessage]

	cases := []struct {
		name    string
		room    int // for memory and the conversation, past what always goes
		leftOut []string
	}{
		{"all fits", full.tokens.Total - fixed, nil},
		{"the lowest scored memory", full.tokens.Blocks[blockProfile] + full.tokens.Blocks[blockOpening] + full.tokens.Blocks[blockEmotional] +
			full.tokens.Blocks[blockMemories] - 1, []string{"memories-0.2"}},
		{"every recalled memory and the pattern", full.tokens.Blocks[blockProfile] + full.tokens.Blocks[blockOpening] + 5, []string{"memories-0.2", "memories-0.5", "memories-0.9", "emotional_patterns-0.7"}},
		{"the opening too", full.tokens.Blocks[blockProfile] + 5, []string{"memories-0.2", "memories-0.5", "memories-0.9", "emotional_patterns-0.7", "s1"}},
		{"the profile last", 10, []string{"memories-0.2", "memories-0.5", "memories-0.9", "emotional_patterns-0.7", "s1", "p1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := assemble(fixed+c.room, parts)
			checkSums(t, a)
			var left []string
			for _, s := range a.tokens.LeftOut {
				left = append(left, s.ID)
			}
			if !slices.Equal(left, c.leftOut) {
				t.Fatalf("left out %q, want %q", left, c.leftOut)
			}
			for _, s := range a.used {
				if slices.Contains(left, s.ID) || !strings.Contains(a.system, "remembered "+s.ID) && s.Block == blockMemories {
					t.Errorf("used %v should be in the context and not left out", s)
				}
			}
			if !strings.Contains(a.system, "This session is about one learner, Emma.") || a.message != "How is she doing?" {
				t.Fatal("the pinned facts and the message always go")
			}
			if a.tokens.Total > fixed+c.room {
				t.Errorf("%d tokens, over the budget of %d", a.tokens.Total, fixed+c.room)
			}
		})
	}
}

// A message longer than the whole budget still goes, alone with what
// always goes: nothing else fits beside it.
func TestTheMessageGoesEvenOverTheBudget(t *testing.T) {
	report := strings.Repeat("Emma read aloud with expression and the teacher was pleased. ", 400)
	a := assemble(MinContextTokens, contextParts{instructions: persona, memory: []memoryBlock{memory(blockMemories, 0.5)},
		history: session(5), message: report})
	checkSums(t, a)
	if a.message != report || len(a.conversation) != 0 || a.tokens.EvictedExchanges != 5 || len(a.used) != 0 {
		t.Fatalf("the message alone should go: %d turns, %+v", len(a.conversation), a.tokens)
	}
	if a.tokens.Total <= MinContextTokens {
		t.Fatalf("the total (%d) should say the message was over the budget", a.tokens.Total)
	}
}

// A message that refers back brings back the evicted turns that best
// match it, at most three, in the order they were said, and marks them as
// earlier in the session; the same words without a back-reference bring
// nothing back.
func TestABackReferenceBringsBackTheBestMatchingEvictedTurns(t *testing.T) {
	history := session(200)
	for _, i := range []int{10, 30, 50, 70} { // facilitator's turns of exchanges 5, 15, 25, 35
		history[i].Content = fmt.Sprintf("Question %d: Emma is building a volcano diorama for the science fair.", i/2)
	}
	const budget = 4_000
	a := assemble(budget, contextParts{instructions: persona, history: history,
		message: "Like we said earlier, what paint for the volcano diorama?"})
	checkSums(t, a)
	if a.tokens.Total > budget || a.tokens.BroughtBack != 3 {
		t.Fatalf("%d tokens, %d turns brought back; want three within the budget", a.tokens.Total, a.tokens.BroughtBack)
	}
	earlier := a.system[strings.Index(a.system, "=== EARLIER IN THIS SESSION ==="):]
	if n := strings.Count(earlier, "volcano diorama"); n != 3 || strings.Contains(earlier, "twenty minutes") {
		t.Fatalf("the earlier block should hold three volcano turns and nothing else:\n%s", earlier)
	}
	if !strings.Contains(earlier, "Facilitator: Question 15:") || !strings.Contains(earlier, "Facilitator: Question 35:") ||
		strings.Index(earlier, "Question 15:") > strings.Index(earlier, "Question 35:") {
		t.Fatalf("the turns should come back in the order they were said:\n%s", earlier)
	}
	if strings.Contains(a.system, "Question 5:") && strings.Contains(a.system, "Question 15:") && strings.Contains(a.system, "Question 25:") && strings.Contains(a.system, "Question 35:") {
		t.Fatal("at most three turns come back")
	}

	plain := assemble(budget, contextParts{instructions: persona, history: history, message: "What paint for the volcano diorama?"})
	if plain.tokens.BroughtBack != 0 || strings.Contains(plain.system, "volcano") {
		t.Fatalf("a message that does not refer back brings nothing back:\n%s", plain.system)
	}
}

// rankEarlier keeps to the floor: a turn that shares with the message only
// a word every turn has, or nothing, stays out, however many there are.
func TestRankEarlierKeepsBelowTheFloorOut(t *testing.T) {
	history := session(100)
	history[20].Content = "Emma loved the volcano diorama."
	history[40].Content = "The diorama's volcano erupted with vinegar."
	if got := rankEarlier("As you mentioned, homework again?", history, 150); len(got) != 0 {
		t.Fatalf("a word every turn has brought back %v", got)
	}
	if got := rankEarlier("As you mentioned, the volcano?", history, 150); !slices.Equal(got, []int{40, 20}) && !slices.Equal(got, []int{20, 40}) {
		t.Fatalf("rankEarlier = %v, want the two volcano turns", got)
	}
	// Only the candidates (the evicted turns) are ranked.
	if got := rankEarlier("As you mentioned, the volcano?", history, 30); !slices.Equal(got, []int{20}) {
		t.Fatalf("rankEarlier over the first 30 turns = %v, want [20]", got)
	}
	if got := rankEarlier("As you mentioned earlier", history, 150); len(got) != 0 {
		t.Fatalf("a message with nothing but its back-reference brought back %v", got)
	}
}

func TestPersonalizationSaysHowMuchMemoryWentIn(t *testing.T) {
	cases := []struct {
		name       string
		retrieval  string
		blocks     map[string]int
		ownLines   bool
		personally string
	}{
		{"nothing of memory", mentor.RetrievalDeep, map[string]int{blockInstructions: 300, blockConversation: 50}, false, mentor.PersonalizationNone},
		{"memory unreadable", mentor.RetrievalNone, map[string]int{}, false, mentor.PersonalizationNone},
		{"recalled memories", mentor.RetrievalLight, map[string]int{blockMemories: 40}, false, mentor.PersonalizationLight},
		{"the summary", mentor.RetrievalLight, map[string]int{blockSummary: 40}, false, mentor.PersonalizationLight},
		{"the facilitator's lines alone", mentor.RetrievalLight, map[string]int{}, true, mentor.PersonalizationLight},
		{"deep retrieval", mentor.RetrievalDeep, map[string]int{blockMemories: 40}, false, mentor.PersonalizationDeep},
		{"the profile", mentor.RetrievalLight, map[string]int{blockProfile: 400}, false, mentor.PersonalizationDeep},
		{"the opening", mentor.RetrievalLight, map[string]int{blockOpening: 90}, false, mentor.PersonalizationDeep},
	}
	for _, c := range cases {
		if got := personalizationOf(c.retrieval, c.blocks, c.ownLines); got != c.personally {
			t.Errorf("%s: %q, want %q", c.name, got, c.personally)
		}
	}
}

// Assembling a 300-exchange session's context, with a back-reference
// ranking the evicted turns, is part of every reply's time to its first
// token: counted afresh (the session's first request to this process),
// and resent with one more exchange, its turns' counts remembered.
func BenchmarkAssembleALongSessionThatRefersBack(b *testing.B) {
	history := session(301)
	parts := contextParts{instructions: persona, pinned: "\n\nThis session is about one learner, Emma.",
		memory:  []memoryBlock{memory(blockMemories, 0.9, 0.8, 0.7, 0.6, 0.5), memory(blockEmotional, 0.4)},
		history: history[:600], message: "Like we said earlier, how long should homework take on weekends?"}
	b.Run("counted afresh", func(b *testing.B) {
		for b.Loop() {
			counts = &tokenCounts{seed: counts.seed, current: map[uint64]int{}}
			assemble(DefaultContextTokens, parts)
		}
	})
	b.Run("resent", func(b *testing.B) {
		assemble(DefaultContextTokens, parts)
		parts.history = history
		for b.Loop() {
			assemble(DefaultContextTokens, parts)
		}
	})
}
