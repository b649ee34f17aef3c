package mentor_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mentormemory/mentor"
	"mentormemory/tokens"
)

func profileMemory(id string, t mentor.MemoryType, content string, metadata mentor.Metadata, confidence float64, seen time.Time) mentor.LearnerMemory {
	return mentor.LearnerMemory{ID: id, Type: t, Content: content, Metadata: metadata, Confidence: confidence,
		Status: mentor.StatusCurrent, LastSeenAt: seen, CreatedAt: seen}
}

func TestProfileReadsAtAGlance(t *testing.T) {
	now := time.Date(2026, 3, 12, 9, 0, 0, 0, time.UTC)
	memories := []mentor.LearnerMemory{
		profileMemory("dog", mentor.Personal, "Alex has a dog named Max", mentor.Metadata{"category": "pets"}, 0.9, now),
		profileMemory("square", mentor.Academic, "Alex solved completing the square on the first try",
			mentor.Metadata{"topic": "completing the square", "resolution": "resolved"}, 0.7, now),
		profileMemory("words", mentor.Academic, "Alex struggles to start word problems",
			mentor.Metadata{"topic": "word problems", "resolution": "unresolved"}, 0.7, now),
		profileMemory("next", mentor.Context, "Next: word problems with the discriminant", mentor.Metadata{"next_topic": "word problems"}, 0.7, now),
		profileMemory("short", mentor.Preference, "Alex wants short explanations", mentor.Metadata{"category": "pacing"}, 0.7, now),
		profileMemory("pictures", mentor.Preference, "When frustrated, Alex needs pictures instead of letters",
			mentor.Metadata{"category": "emotional_response", "trigger": "frustrated"}, 0.7, now),
		profileMemory("tired", mentor.Context, "Alex was tired after a game", nil, 0.7, now),
	}
	own := []mentor.ProfileLine{{Category: mentor.ProfileGoals, Text: "Pass the spring algebra exam"}}
	p := mentor.BuildProfile("alex", "Alex", memories, own, mentor.ProfileTokenBudget, tokens.Count, now)

	byCategory := map[string][]string{}
	for _, l := range p.Lines {
		byCategory[l.Category] = append(byCategory[l.Category], strings.Join(l.MemoryIDs, ","))
	}
	want := map[string][]string{
		mentor.ProfileWho: {"dog"}, mentor.ProfileStrengths: {"square"}, mentor.ProfileStruggles: {"words"},
		mentor.ProfileGoals: {"", "next"}, mentor.ProfilePreferences: {"short"}, mentor.ProfileEmotional: {"pictures"},
	}
	for category, ids := range want {
		if !slices.Equal(byCategory[category], ids) {
			t.Errorf("%s: lines on %q, want %q", category, byCategory[category], ids)
		}
	}
	if len(p.Dropped) != 0 || p.Tokens == 0 || p.Tokens > 200 {
		t.Errorf("a small profile: %d tokens, dropped %v", p.Tokens, p.Dropped)
	}
	page := mentor.RenderProfileMarkdown("Alex", p.Lines)
	if !strings.HasPrefix(page, "# Alex\n\n## Who they are\n\n- Alex has a dog named Max\n") ||
		!strings.Contains(page, "## Goals and what is next\n\n- Pass the spring algebra exam\n- Next: word problems with the discriminant\n") {
		t.Errorf("the page:\n%s", page)
	}
	if p.Tokens != tokens.Count(page) {
		t.Errorf("tokens %d, the page counts %d", p.Tokens, tokens.Count(page))
	}
}

// A profile built from 500 memories stays within its 1,000 tokens, and
// keeps every breakthrough and emotional pattern (each is on a line, if
// only gathered), a facilitator's own line as written, and records what it
// dropped.
func TestProfileOf500MemoriesKeepsWithinItsBudget(t *testing.T) {
	now := time.Date(2026, 3, 12, 9, 0, 0, 0, time.UTC)
	topics := []string{"fractions", "decimals", "reading", "spelling", "geometry", "algebra", "history", "science",
		"music", "art", "division", "graphs", "maps", "poetry", "essays", "coding", "chess", "french", "biology", "physics"}
	var memories []mentor.LearnerMemory
	var kept []string // what must stay
	for i := range 500 {
		id := fmt.Sprintf("m%03d", i)
		topic := topics[i%len(topics)]
		seen := now.Add(-time.Duration(i) * time.Hour)
		var m mentor.LearnerMemory
		switch i % 5 {
		case 0:
			m = profileMemory(id, mentor.Academic, fmt.Sprintf("Breakthrough %d: Alex finally understood a hard part of %s", i, topic),
				mentor.Metadata{"topic": topic, "resolution": "resolved"}, 0.7, seen)
			kept = append(kept, id)
		case 1:
			m = profileMemory(id, mentor.Preference, fmt.Sprintf("When anxious about %s, Alex calms down with a short break (%d)", topic, i),
				mentor.Metadata{"category": "emotional_response", "trigger": "anxious", "topic": topic}, 0.7, seen)
			kept = append(kept, id)
		case 2:
			// Without a topic, these cannot be gathered: some must leave.
			m = profileMemory(id, mentor.Academic, fmt.Sprintf("Alex still finds step %d of %s confusing", i, topic),
				mentor.Metadata{"resolution": "unresolved"}, 0.5+float64(i%4)/10, seen)
		case 3:
			m = profileMemory(id, mentor.Personal, fmt.Sprintf("Alex mentioned a friend who likes %s (%d)", topic, i),
				nil, 0.7, seen)
		default:
			m = profileMemory(id, mentor.Preference, fmt.Sprintf("Alex likes worked examples in %s (%d)", topic, i),
				mentor.Metadata{"category": "examples", "topic": topic}, 0.6, seen)
		}
		memories = append(memories, m)
	}
	own := []mentor.ProfileLine{{Category: mentor.ProfileGoals, Text: "Pass the spring algebra exam"}}
	p := mentor.BuildProfile("alex", "Alex", memories, own, mentor.ProfileTokenBudget, tokens.Count, now)

	if page := mentor.RenderProfileMarkdown("Alex", p.Lines); p.Tokens > mentor.ProfileTokenBudget || tokens.Count(page) != p.Tokens {
		t.Fatalf("the profile has %d tokens (the page %d), over its budget of %d", p.Tokens, tokens.Count(page), mentor.ProfileTokenBudget)
	}
	onLines := map[string]bool{}
	for _, l := range p.Lines {
		for _, id := range l.MemoryIDs {
			onLines[id] = true
		}
	}
	for _, id := range kept {
		if !onLines[id] {
			t.Fatalf("memory %s, a breakthrough or an emotional pattern, is on no line", id)
		}
	}
	if !slices.ContainsFunc(p.Lines, func(l mentor.ProfileLine) bool { return l.ByFacilitator && l.Text == "Pass the spring algebra exam" }) {
		t.Fatal("the facilitator's own line is gone or changed")
	}
	if len(p.Dropped) == 0 {
		t.Fatal("nothing recorded as dropped from 500 memories")
	}
	for _, d := range p.Dropped {
		for _, id := range d.MemoryIDs {
			if onLines[id] || slices.Contains(kept, id) {
				t.Fatalf("memory %s is both dropped and kept", id)
			}
		}
	}
}
