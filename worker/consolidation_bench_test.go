package worker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"mentormemory/worker"
)

// BenchmarkOfflineConsolidationOf500Memories times one whole consolidation
// run of a learner with 500 current memories, as the worker runs it: the
// run is started and the memories read, planned by rules, the profile
// rebuilt and counted, and the changes applied with their history, in the
// database. Each run starts from the same 500 memories.
//
//	go test ./worker -run '^$' -bench OfflineConsolidation -benchtime 20x
func BenchmarkOfflineConsolidationOf500Memories(b *testing.B) {
	e := newEnv(b, worker.Config{})
	topics := []string{"fractions", "decimals", "reading", "spelling", "geometry", "algebra", "history", "science"}
	week := time.Now().AddDate(0, 0, -10)
	for i := range 500 {
		topic := topics[i%len(topics)]
		kind, content, metadata := "personal", fmt.Sprintf("Alex mentioned a friend who likes %s, number %d", topic, i), `{}`
		switch i % 5 {
		case 0:
			kind, content = "academic", fmt.Sprintf("Alex finally understood part %d of %s", i, topic)
			metadata = fmt.Sprintf(`{"topic": %q, "resolution": "resolved"}`, topic)
		case 1:
			kind, content = "academic", fmt.Sprintf("Alex finds step %d of %s confusing", i, topic)
			metadata = fmt.Sprintf(`{"topic": %q, "resolution": "unresolved"}`, topic)
		case 2:
			kind, content = "context", fmt.Sprintf("Alex has a %s quiz on Friday, round %d", topic, i)
		case 3:
			kind, content = "preference", fmt.Sprintf("Alex likes worked examples in %s (%d)", topic, i)
			metadata = fmt.Sprintf(`{"topic": %q, "category": "examples"}`, topic)
		}
		e.exec(`insert into learner_memories (facilitator_id, learner_id, type, content, importance, confidence, metadata, source, created_at, last_seen_at)
			values ($1::uuid, $2::uuid, $3, $4, 0.6, 0.7, $5::jsonb, 'extracted', $6, $6)`,
			e.facilitator.ID, *e.alex, kind, content, metadata, week.Add(time.Duration(i)*time.Minute))
	}
	var took []time.Duration
	for b.Loop() {
		b.StopTimer()
		e.exec(`update learner_memories set status = 'current', superseded_by = null, needs_review = false`)
		if _, err := e.svc.Consolidate(e.ctx, *e.alex); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if ran, err := e.worker.RunConsolidationOnce(context.Background()); !ran || err != nil {
			b.Fatalf("the run did not run: %v", err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Milliseconds()), "p99-ms")
}
