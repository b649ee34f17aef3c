package simulator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mentormemory/config"
	"mentormemory/extractor"
	"mentormemory/llm"
	"mentormemory/llm/llmtest"
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
	err := simulator.Simulate(context.Background(), cfg, pool, "samples/student-alex", simulator.Setup{Start: start, Out: &out})
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
	// Session-1 facts recalled where they matter in session 3. (Rockets do
	// not bring up space examples here: with no embedding model, recall
	// goes by words, and the two share none.)
	for _, c := range []struct{ message, want string }{
		{"hi. word problems today right? I hate word problems", "emotional patterns: When frustrated by symbols, Alex needs visual explanations"},
		{"hi. word problems today right? I hate word problems", "Alex has a dog named Max"},
		{"i'm so tired today, we had a game last night", "personal: Alex plays basketball; games are on Fridays"},
	} {
		if got := recallFor(t, three, c.message); !strings.Contains(got, c.want) {
			t.Errorf("session 3, recall for %q lacks %q:\n%s", c.message, c.want, got)
		}
	}
	// And only what the message earns: "hint" brings the memory about
	// hints alone, and confusion no fact that was learnt while confused.
	if got := recallFor(t, three, "hint"); got != "preferences: Alex likes to try a problem quietly before getting hints" {
		t.Errorf("session 3, recall for \"hint\" brings more than the memory about hints:\n%s", got)
	}
	if got := recallFor(t, three, "I don't even know where to start. there's too much text"); strings.Contains(got, "emotional patterns") {
		t.Errorf("session 3, no memory says how Alex responds to confusion, yet recall brings emotional patterns:\n%s", got)
	}
	if !strings.Contains(three, "[OPENING] Alex: relevant today: It's Friday: Alex plays basketball; games are on Fridays") {
		t.Error("session 3 falls on a Friday: the opening should bring up the game")
	}
	if strings.Contains(three, "unfinished thread: Completing the square is next") {
		t.Error("a thread from session 1, picked up in session 2, is not unfinished in session 3")
	}

	// Consolidation after each session keeps memory true: Thursday's "test
	// on Friday" is over by Monday's end, the thread taken up is finished,
	// and the struggle settled by a breakthrough leaves recall.
	two := sessions[2]
	for _, want := range []string{
		"[CONSOLIDATION] Alex: resolved: Alex confused the discriminant with the leading coefficient",
		"[PROFILE] Alex: Strengths and breakthroughs: Alex connected the discriminant to the shape of the graph",
	} {
		if !strings.Contains(one, want) {
			t.Errorf("session 1 lacks %q", want)
		}
	}
	for _, want := range []string{
		"[CONSOLIDATION] Alex: expired: Alex has a quadratics test on Friday",
		"[CONSOLIDATION] Alex: expired: Completing the square is next: the session ran out of time for it",
	} {
		if !strings.Contains(two, want) {
			t.Errorf("session 2 lacks %q", want)
		}
	}
	if opening, _, _ := strings.Cut(two, "[RETRIEVAL]"); strings.Contains(opening, "unfinished thread: Alex has a quadratics test on Friday") {
		t.Error("Monday's opening offers Thursday's test on Friday as a thread left open")
	}
	// After the third session, the digest of the three: what recurs and
	// where things stand.
	for _, want := range []string{
		"[PROFILE] Alex: the last 3 sessions,",
		"[PROFILE] Alex: what keeps coming back: A breakthrough in 3 of the last 3 sessions.",
		"[PROFILE] Alex: where things stand: Next: mix word problems with the discriminant.",
	} {
		if !strings.Contains(three, want) {
			t.Errorf("session 3 lacks %q", want)
		}
	}
	for _, gone := range []string{"Alex has a quadratics test on Friday", "Completing the square is next",
		"Alex confused the discriminant with the leading coefficient"} {
		if strings.Contains(three, gone) {
			t.Errorf("session 3 still brings up %q", gone)
		}
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

// With a model and RecordTo, the model's extractions are written as a
// fixture that replays them: one recording per exchange the model was
// asked about.
func TestSimulatorRecordsTheModelsExtractions(t *testing.T) {
	pool := pgtest.NewPool(t)
	const learnt = `{"memories": [{"type": "personal", "content": "Alex has a dog named Max", "importance": 0.6, "confidence": 0.9, "metadata": {"category": "pets"}}]}`
	model := llmtest.NewChat(t, llmtest.ReplyContent(learnt, "stop"))
	cfg := config.Config{
		Database: config.Database{ArchiveTurns: 50},
		Model:    config.Model{Chat: llm.Config{APIKey: "test-key", BaseURL: model.URL, Model: "test-model", Timeout: 5 * time.Second}},
	}
	path := filepath.Join(t.TempDir(), "recorded.json")
	var out bytes.Buffer
	err := simulator.Simulate(context.Background(), cfg, pool, "samples/student-alex",
		simulator.Setup{Start: time.Date(2026, 11, 12, 16, 0, 0, 0, time.UTC), Out: &out, RecordTo: path})
	if err != nil {
		t.Fatal(err)
	}
	extractions := 0
	for _, call := range model.Calls() {
		if call.Body.ResponseFormat != nil {
			extractions++
		}
	}
	if _, err := extractor.LoadFixture(path); err != nil {
		t.Fatalf("the recording does not load as a fixture: %v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recorded struct {
		Exchanges []struct {
			Memories []struct{ Content string }
		}
	}
	if err := json.Unmarshal(raw, &recorded); err != nil {
		t.Fatal(err)
	}
	if extractions == 0 || len(recorded.Exchanges) != extractions {
		t.Fatalf("the model was asked %d times; the fixture holds %d exchanges", extractions, len(recorded.Exchanges))
	}
	for _, ex := range recorded.Exchanges {
		if len(ex.Memories) != 1 || ex.Memories[0].Content != "Alex has a dog named Max" {
			t.Fatalf("an exchange's recording is not what the model answered: %+v", ex)
		}
	}
	if !strings.Contains(out.String(), "[RECORDED] The model's extractions are in "+path) {
		t.Errorf("the log must say where the recording went:\n%s", out.String())
	}

	// Recording needs a model: without one there is nothing to record.
	err = simulator.Simulate(context.Background(), config.Config{Database: config.Database{ArchiveTurns: 50}}, pool,
		"samples/student-alex", simulator.Setup{Start: time.Now(), Out: &out, RecordTo: path})
	if err == nil || !strings.Contains(err.Error(), "needs a model") {
		t.Fatalf("recording without a model: %v", err)
	}
}
