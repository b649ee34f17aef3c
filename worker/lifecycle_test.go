package worker_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mentormemory/mentor"
	"mentormemory/worker"
)

// extractedReply is a structured-output reply holding one memory per
// content, each with the importance and confidence given.
func extractedReply(t *testing.T, memories ...map[string]any) string {
	t.Helper()
	for _, m := range memories {
		if _, ok := m["replaces"]; !ok {
			m["replaces"] = nil
		}
		m["metadata"] = map[string]any{"emotion": nil, "valence": nil, "resolution": nil, "topic": "reading",
			"category": nil, "trigger": nil, "response": nil, "next_topic": nil}
	}
	out, err := json.Marshal(map[string]any{"memories": memories})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// What extraction stores follows the confidence rules, whatever the model
// says: a new memory starts at 0.7, a repeat raises it to 0.9, and a memory
// of importance under 0.4 is not stored. Each change is in the memory's
// history, made by extraction in its job.
func TestExtractionFollowsTheConfidenceRules(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.reply = func(int) (int, string) {
		return 200, extractedReply(t,
			map[string]any{"type": "academic", "content": "Alex reads chapter books alone now", "importance": 0.7, "confidence": 0.95},
			map[string]any{"type": "personal", "content": "Alex said hello", "importance": 0.2, "confidence": 0.9})
	}
	e.post("Alex read a whole chapter book by himself!", "That is a big step.")
	e.runOnce()

	list, err := e.svc.ListMemories(e.ctx, mentor.ListQuery{LearnerID: e.alex})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Content != "Alex reads chapter books alone now" || list[0].Confidence != mentor.ExtractedConfidence {
		t.Fatalf("stored %+v, want the one important memory at confidence %v", list, mentor.ExtractedConfidence)
	}
	id := list[0].ID

	e.reply = func(int) (int, string) {
		return 200, extractedReply(t,
			map[string]any{"type": "academic", "content": "Alex reads chapter books alone now!", "importance": 0.7, "confidence": 0.6})
	}
	e.post("Another chapter book, all alone.", "He is on a roll.")
	e.runOnce()
	list, _ = e.svc.ListMemories(e.ctx, mentor.ListQuery{LearnerID: e.alex})
	if len(list) != 1 || list[0].ID != id || list[0].Confidence != mentor.RepeatConfidence || list[0].Mentions != 2 {
		t.Fatalf("after the repeat: %+v, want one memory at %v", list, mentor.RepeatConfidence)
	}

	history, err := e.svc.MemoryHistory(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 2 || history[0].Change != mentor.ChangeCreated || history[1].Change != mentor.ChangeMerged {
		t.Fatalf("history %+v, want created then merged", history)
	}
	for _, h := range history {
		if h.Actor != mentor.ActorExtraction || h.JobID == nil || h.SessionID == nil {
			t.Fatalf("a change made by extraction: %+v", h)
		}
	}
	if *history[1].ConfidenceBefore != mentor.ExtractedConfidence || *history[1].ConfidenceAfter != mentor.RepeatConfidence {
		t.Fatalf("the repeat as recorded: %v → %v", *history[1].ConfidenceBefore, *history[1].ConfidenceAfter)
	}
}

// The extractor, shown the known memories by key, may say a new memory
// replaces one: the known memory is superseded by it, even in words no
// rule would match, and flagged for review. A key it was never shown
// replaces nothing.
func TestTheExtractorSaysWhichKnownMemoryANewOneReplaces(t *testing.T) {
	e := newEnv(t, worker.Config{})
	hates := e.remember(mentor.Preference, "Alex hates reading aloud", nil, time.Now())
	e.reply = func(int) (int, string) {
		return 200, extractedReply(t, map[string]any{"type": "preference", "content": "Alex now enjoys reading to the class",
			"importance": 0.7, "confidence": 0.9, "replaces": "k1"})
	}
	e.post("Alex read to the whole class today and loved it!", "What a change!")
	e.runOnce()

	if !strings.Contains(e.model.Calls()[0].Body.First("user"), `<memory key="k1" type="preference">[LEARNER] hates reading aloud</memory>`) {
		t.Fatalf("the model was not shown the known memory by its key:\n%s", e.model.Calls()[0].Body.First("user"))
	}
	list, err := e.svc.ListMemories(e.ctx, mentor.ListQuery{LearnerID: e.alex})
	if err != nil {
		t.Fatal(err)
	}
	var old, current mentor.LearnerMemory
	for _, m := range list {
		if m.ID == hates {
			old = m
		} else {
			current = m
		}
	}
	if current.Content != "Alex now enjoys reading to the class" || old.Status != mentor.StatusSuperseded ||
		old.SupersededBy == nil || *old.SupersededBy != current.ID || !old.NeedsReview {
		t.Fatalf("after the replacing memory: old %+v, new %+v", old, current)
	}
	history, _ := e.svc.MemoryHistory(e.ctx, hates)
	if last := history[len(history)-1]; last.Change != mentor.ChangeSuperseded || last.Actor != mentor.ActorExtraction || last.JobID == nil {
		t.Fatalf("the supersession as recorded: %+v", last)
	}

	e.reply = func(int) (int, string) {
		return 200, extractedReply(t, map[string]any{"type": "personal", "content": "Alex joined the chess club",
			"importance": 0.7, "confidence": 0.9, "replaces": "k9"})
	}
	e.post("Alex joined the chess club.", "Great!")
	e.runOnce()
	if n := e.count(`select count(*) from learner_memories where status = 'superseded'`); n != 1 {
		t.Fatalf("%d memories superseded, want only the one replaced by a key the model was shown", n)
	}
}
