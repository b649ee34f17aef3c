package mentor_test

import (
	"encoding/json"
	"os"
	"testing"

	"mentormemory/mentor"
)

// BenchmarkAdvanceSession measures what every post does to its live
// session: the closing state read from each exchange of a sample session,
// one exchange at a time, as the posts bring them.
func BenchmarkAdvanceSession(b *testing.B) {
	raw, err := os.ReadFile("../simulator/samples/facilitator-dana/session_1.json")
	if err != nil {
		b.Fatal(err)
	}
	var turns []mentor.Turn
	if err := json.Unmarshal(raw, &turns); err != nil {
		b.Fatal(err)
	}
	newID := func() string { return "session" }
	for b.Loop() {
		live := mentor.CurrentSession{}
		for i := 0; i+2 <= len(turns); i += 2 {
			w := mentor.AdvanceSession(live, turns[i:i+2], "Emma", newID)
			live = mentor.CurrentSession{ID: w.ID, Closing: w.Closing}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(turns)/2)/1000, "µs/exchange")
}
