package worker_test

import (
	"fmt"
	"slices"
	"testing"

	"mentormemory/mentor"
	"mentormemory/worker"
)

// A fact learnt again and again stays within the limits the database holds
// every memory to (migration 0013): it names its latest 100 source turns,
// and learnt metadata joins only while the memory keeps within 16 keys.
func TestMergedMemoryKeepsWithinItsLimits(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.reply = func(int) (int, string) { return 200, memoriesReply("Alex has a dog named Max") }
	e.post("gotta go feed my dog Max", "Say hi to Max!")
	e.runOnce()

	// As if learnt 99 times before: old turn ids below every real one, and
	// 16 metadata keys of the person's own.
	full := map[string]any{}
	for i := range 16 {
		full[fmt.Sprintf("note_%d", i)] = "kept"
	}
	e.exec(`update learner_memories set source_turn_ids = array(select -g from generate_series(1, 99) g order by 1),
		metadata = $1::jsonb`, full)

	e.post("Max the dog chewed my homework", "Oh no, Max!")
	e.runOnce()
	list, err := e.svc.ListMemories(e.ctx, mentor.ListQuery{LearnerID: e.alex})
	if err != nil || len(list) != 1 || list[0].Mentions != 2 {
		t.Fatalf("the repeat should merge: %+v %v", list, err)
	}
	m := list[0]
	newest := e.count(`select max(id) from conversation_turns`)
	if len(m.SourceTurnIDs) != 100 || !slices.Contains(m.SourceTurnIDs, int64(newest)) || slices.Contains(m.SourceTurnIDs, -99) ||
		!slices.IsSorted(m.SourceTurnIDs) {
		t.Fatalf("source turns %v: want the latest 100, the newest %d in, the oldest -99 out, in order", m.SourceTurnIDs, newest)
	}
	if len(m.Metadata) != 16 || m.Metadata["topic"] != nil {
		t.Fatalf("metadata %v: want the 16 keys it had, nothing learnt past them", m.Metadata)
	}
}
