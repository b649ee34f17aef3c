package simulator_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"mentormemory/config"
	"mentormemory/postgres/pgtest"
	"mentormemory/simulator"
)

// TestSimulatorRecallsSessionOneInSessionThree runs the student-alex
// transcripts through the whole pipeline with the recorded extractions and
// checks that what was learnt in session 1 comes back in session 3.
func TestSimulatorRecallsSessionOneInSessionThree(t *testing.T) {
	pool := pgtest.NewPool(t)
	var out bytes.Buffer
	start := time.Date(2026, 11, 12, 16, 0, 0, 0, time.UTC) // a Thursday
	// The service as configured without a model: the offline summarizer
	// and the recorded extractions.
	cfg := config.Config{Database: config.Database{ArchiveTurns: 50}}
	err := simulator.Simulate(context.Background(), cfg, pool, "samples/student-alex", start, &out)
	if err != nil {
		t.Fatal(err)
	}
	log := out.String()
	t.Log(log)
	if !strings.Contains(log, "[SETUP] No model key: replaying the recorded extractions in simulator/fixtures/student-alex.json") {
		t.Fatal("the log must say the extractions are replayed")
	}
	sessions := strings.Split(log, "[SESSION] === Session ")
	if len(sessions) != 4 {
		t.Fatalf("want 3 sessions in the log, got %d", len(sessions)-1)
	}
	one, three := sessions[1], sessions[3]
	for _, want := range []string{
		"[EXTRACTION] Memory 1: {type: personal, content: \"Alex plays basketball; games are on Fridays\"",
		"[CLOSING] Alex: final emotional arc: anxious → confused → frustrated → excited",
		"[OPENING CACHE] Stored for Alex:",
	} {
		if !strings.Contains(one, want) {
			t.Errorf("session 1 lacks %q", want)
		}
	}
	// Session-1 facts recalled where they matter in session 3.
	for _, c := range []struct{ message, want string }{
		{"hi. word problems today right? I hate word problems", "emotional patterns: When frustrated by symbols, Alex needs visual explanations"},
		{"hi. word problems today right? I hate word problems", "Alex has a dog named Max"},
		{"ok that was actually kind of fun because rockets", "Alex prefers space examples over basketball math"},
		{"i'm so tired today, we had a game last night", "personal: Alex plays basketball; games are on Fridays"},
	} {
		if got := recallFor(t, three, c.message); !strings.Contains(got, c.want) {
			t.Errorf("session 3, recall for %q lacks %q:\n%s", c.message, c.want, got)
		}
	}
	if !strings.Contains(three, "[OPENING] Alex: relevant today: It's Friday: Alex plays basketball; games are on Fridays") {
		t.Error("session 3 falls on a Friday: the opening should bring up the game")
	}
	if strings.Contains(three, "unfinished thread: Completing the square is next") {
		t.Error("a thread from session 1, picked up in session 2, is not unfinished in session 3")
	}
}

// recallFor returns the recall results logged for a message.
func recallFor(t *testing.T, log, message string) string {
	t.Helper()
	_, after, found := strings.Cut(log, "Message: \""+message+"\"")
	_, results, found2 := strings.Cut(after, "[RETRIEVAL] Results: ")
	if !found || !found2 {
		t.Fatalf("no recall logged for %q", message)
	}
	line, _, _ := strings.Cut(results, "\n")
	return line
}
