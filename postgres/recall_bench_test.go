package postgres_test

import (
	"strings"
	"testing"
	"time"

	"mentormemory/mentor"
	"mentormemory/test/latency"
)

// BenchmarkRecall times recall as the mentor runs it before each reply
// (mentor.Service.RecallContext: the live session read, the plan, and one
// ranking statement with its relevance floor) over the labelled learner of
// TestRecallQuality, 54 memories, cycling through the labelled messages,
// one at a time. It runs in three states of the conversation (a session's
// first message, a follow-up on the live session's topic, a change of
// topic) by words alone and by words and meaning, and reports the p50 and
// p99 of one recall. By words and meaning, the message is embedded by the
// test's fake model on the loopback: what a real model's call costs is not
// in the figures.
//
//	DATABASE_URL=... go test ./postgres -run '^$' -bench Recall -benchtime 2000x
func BenchmarkRecall(b *testing.B) {
	f := newRecallFixture(b)
	var queries []string
	for _, q := range f.set.Queries {
		queries = append(queries, q.Message)
	}
	all := queries
	for _, q := range f.set.Emotional {
		all = append(all, q.Message)
	}
	for _, c := range []struct {
		name string
		// previous is the live session's exchange, nil for none.
		previous func(string) string
		messages []string
		mode     string
	}{
		{"session start", nil, all, mentor.RetrievalDeep},
		// The exchange before spoke of every labelled topic, so each query
		// follows on from it, and light retrieval runs.
		{"follow-up", func(string) string { return strings.Join(queries, " ") }, queries, mentor.RetrievalLight},
		{"new topic", func(string) string { return offTopic }, all, mentor.RetrievalDeep},
	} {
		f.enter(b, scenario{name: c.name, previous: c.previous}, "")
		for _, svc := range []struct {
			name string
			svc  *mentor.Service
		}{{"words", f.words}, {"words and meaning", f.hybrid}} {
			b.Run(c.name+"/"+svc.name, func(b *testing.B) {
				for _, message := range c.messages {
					r, err := svc.svc.RecallContext(f.ctx, f.learner, message, mentor.MemoryFilter{})
					if err != nil || r.Retrieval.Mode != c.mode {
						b.Fatalf("%q plans %s retrieval (%v), want %s", message, r.Retrieval.Mode, err, c.mode)
					}
				}
				times := make([]time.Duration, 0, b.N)
				for i := 0; b.Loop(); i++ {
					start := time.Now()
					if _, err := svc.svc.RecallContext(f.ctx, f.learner, c.messages[i%len(c.messages)], mentor.MemoryFilter{}); err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(start))
				}
				latency.Report(b, "recall", times)
			})
		}
	}
}
