package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// result is what measuring a route found.
type result struct {
	route     *route
	count     int // successful requests
	errors    int
	firstErr  string
	elapsed   time.Duration
	latencies []time.Duration // successful requests, sorted
	outcome   *outcome
	cpu       cpuUse
}

// measure sends requests from concurrency workers until the time is up or
// limit requests were sent, and returns the latencies of the answers: from
// sending the request to reading the last byte of the body.
func measure(ctx context.Context, client *http.Client, rt *route, concurrency int, d time.Duration, limit int, seed uint64) *result {
	res := &result{route: rt, outcome: &outcome{}}
	var sent atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	begin := time.Now()
	deadline := begin.Add(d)
	for w := range concurrency {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(w)+1))
			var lat []time.Duration
			var errs int
			var firstErr string
			fail := func(err error) {
				errs++
				if firstErr == "" {
					firstErr = err.Error()
				}
			}
			for ctx.Err() == nil && time.Now().Before(deadline) {
				seq := sent.Add(1)
				if seq > int64(limit) {
					break
				}
				req, err := rt.request(r, seq)
				if err != nil {
					fail(err)
					continue
				}
				elapsed, err := send(ctx, client, req, rt.check, res.outcome)
				if err != nil {
					fail(err)
					continue
				}
				lat = append(lat, elapsed)
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			res.errors += errs
			if res.firstErr == "" {
				res.firstErr = firstErr
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	res.elapsed = time.Since(begin)
	res.count = len(res.latencies)
	slices.Sort(res.latencies)
	return res
}

// send sends req and checks the answer: status 200, then check. The
// latency is from sending the request to reading the last byte of the body.
func send(ctx context.Context, client *http.Client, req *http.Request, check func([]byte, *outcome) error, o *outcome) (time.Duration, error) {
	start := time.Now()
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	elapsed := time.Since(start)
	switch {
	case err != nil:
		return 0, err
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
	}
	if err := check(body, o); err != nil {
		return 0, fmt.Errorf("wrong answer: %w", err)
	}
	return elapsed, nil
}

// percentile is the nearest-rank percentile of the successful requests.
func (r *result) percentile(p float64) time.Duration {
	n := len(r.latencies)
	if n == 0 {
		return 0
	}
	k := int(math.Ceil(float64(n)*p)) - 1
	return r.latencies[max(0, min(k, n-1))]
}

func (r *result) max() time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[len(r.latencies)-1]
}

func (r *result) throughput() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.count+r.errors) / r.elapsed.Seconds()
}

// passed says whether p99 is within target and nothing failed.
func (r *result) passed() bool {
	return r.count > 0 && r.errors == 0 && r.percentile(0.99) <= r.route.target
}
