package summarizer

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"mentormemory/mentor"
)

// BenchmarkOfflineUpdate measures the update every post makes with the
// offline summarizer: a rolling summary of a sample session plus the two
// turns of the next exchange. It reports the p50 and p99 of one update.
func BenchmarkOfflineUpdate(b *testing.B) {
	raw, err := os.ReadFile("../simulator/samples/facilitator-dana/session_1.json")
	if err != nil {
		b.Fatal(err)
	}
	var turns []mentor.Turn
	if err := json.Unmarshal(raw, &turns); err != nil {
		b.Fatal(err)
	}
	if len(turns) < 4 {
		b.Fatalf("the sample has %d turns, want at least 4", len(turns))
	}
	ctx := context.Background()
	s := NewOffline()
	// The summary as the service holds it before the last exchange.
	var previous string
	for i := 0; i+2 <= len(turns)-2; i += 2 {
		if previous, err = s.Summarize(ctx, mentor.SummaryRequest{Previous: previous, Turns: turns[i : i+2], LearnerName: "Emma"}); err != nil {
			b.Fatal(err)
		}
	}
	next := mentor.SummaryRequest{Previous: previous, Turns: turns[len(turns)-2:], LearnerName: "Emma"}

	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if _, err := s.Summarize(ctx, next); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}
