package handlers_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/test/latency"
)

// BenchmarkNeighbourDuringUnknownWordSearches times another facilitator's
// GET /api/learners, one request at a time, alone and while facilitator A
// runs four searches of 100 made-up words at once, over and over, against
// a full (20,000-word) vocabulary. It reports p50 and p99 of B's requests
// and of A's searches.
//
//	go test ./handlers -run '^$' -bench NeighbourDuringUnknownWordSearches -benchtime 200x
func BenchmarkNeighbourDuringUnknownWordSearches(b *testing.B) {
	svc, search, learners := startWithUnknownWordSearch(b)
	client := apptest.Client{URL: svc.URL}

	for _, tc := range []struct {
		name     string
		searches int
	}{{"alone", 0}, {"beside 4 searches", 4}} {
		b.Run(tc.name, func(b *testing.B) {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var mu sync.Mutex
			var searchTimes []time.Duration
			for range tc.searches {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						start := time.Now()
						r := client.Do(b, search)
						mu.Lock()
						searchTimes = append(searchTimes, time.Since(start))
						mu.Unlock()
						if r.Status != http.StatusOK {
							b.Errorf("A's search answered %s", r)
							return
						}
					}
				})
			}
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				r := client.Do(b, learners)
				times = append(times, time.Since(start))
				if r.Status != http.StatusOK {
					b.Fatalf("the neighbour's GET answered %s", r)
				}
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			latency.Report(b, "neighbour", times)
			if len(searchTimes) > 0 {
				latency.Report(b, "search", searchTimes)
			}
		})
	}
}
