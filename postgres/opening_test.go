package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"mentormemory/postgres"
)

// The opening is built from the most important personal and context
// memories, across both types: 30 of them, whatever else the learner has.
func TestOpeningReadsTheMostImportantPersonalAndContextMemories(t *testing.T) {
	ctx := context.Background()
	pool, facilitator, learner := newLearnerDatabase(t)
	// 40 memories of each type with importances interleaved across the
	// types; the academic ones matter most but are not for the opening.
	var want []string
	for i := range 40 {
		for _, kind := range []string{"personal", "context", "academic"} {
			importance := (float64(i) / 40) / 2
			switch kind {
			case "context":
				importance += 0.5 / 80
			case "academic":
				importance += 0.5
			}
			var id string
			if err := pool.QueryRow(ctx, `insert into public.learner_memories
				(facilitator_id, learner_id, type, content, importance, confidence, source)
				values ($1::uuid, $2::uuid, $3, $4, $5, 0.9, 'added') returning id::text`,
				facilitator, learner, kind, fmt.Sprintf("%s fact %d", kind, i), importance).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if kind != "academic" && i >= 25 {
				want = append(want, id)
			}
		}
	}

	ids, importance, err := postgres.OpeningMemoryIDs(ctx, pool, facilitator, learner)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(importance); i++ {
		if importance[i] > importance[i-1] {
			t.Fatalf("memory %d is more important than the one before it: %v", i, importance)
		}
	}
	slices.Sort(ids)
	slices.Sort(want)
	if len(ids) != postgres.OpeningMemories || !slices.Equal(ids, want) {
		t.Fatalf("the opening read %d memories %v, want the %d most important personal and context ones %v", len(ids), ids, len(want), want)
	}
}
