// Package latency reports how long the operations a benchmark timed one by
// one took, as metrics beside ns/op: the tail, which an average hides.
package latency

import (
	"slices"
	"testing"
	"time"
)

// Report reports the p50 and p99 of times in milliseconds, as
// name-p50-ms and name-p99-ms.
func Report(b *testing.B, name string, times []time.Duration) {
	slices.Sort(times)
	at := func(q float64) float64 {
		return float64(times[int(q*float64(len(times)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.5), name+"-p50-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
}
