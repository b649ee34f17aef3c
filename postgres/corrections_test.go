package postgres_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/uuid"

	"mentormemory/mentor"
)

// A correction leaves its trace: the memory list says when a person
// corrected a memory (a confirmation is no correction), and the session the
// memory was learnt in lists the corrected text under what was learnt, not
// the old one; a forgotten memory leaves that list.
func TestACorrectionShowsInTheListAndInWhatTheSessionLearnt(t *testing.T) {
	me, store, pool, facilitator, learner := newLearnerStore(t)
	ctx := context.Background()

	const dinosaurs, horses, maps = "Ada loves dinosaurs.", "Ada draws horses.", "Ada likes maps."
	session := uuid.NewString()
	closing, _ := json.Marshal(mentor.ClosingState{SessionID: session, NewMemories: []string{dinosaurs, horses, maps}})
	if _, err := pool.Exec(ctx, `insert into public.mentor_sessions (id, facilitator_id, learner_id, closing)
		values ($1::uuid, $2::uuid, $3::uuid, $4::jsonb)`, session, facilitator, learner, string(closing)); err != nil {
		t.Fatal(err)
	}
	learnt := func(content string) string {
		t.Helper()
		var id string
		if err := pool.QueryRow(ctx, `insert into public.learner_memories
			(facilitator_id, learner_id, type, content, importance, confidence, metadata, source, session_id)
			values ($1::uuid, $2::uuid, 'personal', $3, 0.5, 0.8, '{}', 'extracted', $4::uuid) returning id::text`,
			facilitator, learner, content, session).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	dinosaursID, horsesID, mapsID := learnt(dinosaurs), learnt(horses), learnt(maps)
	sessionLearnt := func() []string {
		t.Helper()
		var raw []byte
		if err := pool.QueryRow(ctx, `select closing from public.mentor_sessions where id = $1::uuid`, session).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var c mentor.ClosingState
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		return c.NewMemories
	}

	const corrected = "Ada loves dinosaurs, especially the long-necked ones."
	answer, err := store.UpdateMemory(me, dinosaursID, mentor.MemoryPatch{Content: new(corrected)})
	if err != nil {
		t.Fatal(err)
	}
	if answer.CorrectedAt == nil {
		t.Fatalf("the correction's answer does not say it was corrected: %+v", answer)
	}
	if _, err := store.UpdateMemory(me, mapsID, mentor.MemoryPatch{Confirm: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := sessionLearnt(), []string{corrected, horses, maps}; !slices.Equal(got, want) {
		t.Fatalf("the session learnt %q after the correction, want %q", got, want)
	}

	listed, err := store.ListMemories(me, mentor.ListQuery{LearnerID: &learner, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range listed {
		switch {
		case m.ID == dinosaursID && (m.CorrectedAt == nil || m.Content != corrected):
			t.Errorf("the corrected memory is listed as %+v, want its correction's time", m)
		case m.ID != dinosaursID && m.CorrectedAt != nil:
			t.Errorf("%q is listed as corrected at %v, and never was", m.Content, m.CorrectedAt)
		}
	}

	if err := store.DeleteMemory(me, horsesID); err != nil {
		t.Fatal(err)
	}
	if got, want := sessionLearnt(), []string{corrected, maps}; !slices.Equal(got, want) {
		t.Fatalf("the session learnt %q after forgetting %q, want %q", got, horses, want)
	}
}
