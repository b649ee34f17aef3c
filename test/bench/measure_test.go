package bench

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// millis is a sorted list of latencies of 1, 2, … n ms.
func millis(n int) []time.Duration {
	l := make([]time.Duration, n)
	for i := range l {
		l[i] = time.Duration(i+1) * time.Millisecond
	}
	return l
}

func TestPercentileIsTheNearestRank(t *testing.T) {
	for _, c := range []struct {
		n    int
		p    float64
		want time.Duration
	}{
		{100, 0.50, 50 * time.Millisecond},
		{100, 0.90, 90 * time.Millisecond},
		{100, 0.99, 99 * time.Millisecond},
		{100, 1, 100 * time.Millisecond},
		{1000, 0.99, 990 * time.Millisecond},
		{10, 0.99, 10 * time.Millisecond}, // rank 9.9 rounds up to the slowest
		{10, 0.50, 5 * time.Millisecond},
		{3, 0.50, 2 * time.Millisecond},
		{1, 0.99, time.Millisecond},
		{1, 0, time.Millisecond},
		{0, 0.99, 0},
	} {
		r := &result{latencies: millis(c.n)}
		if got := r.percentile(c.p); got != c.want {
			t.Errorf("p%g of %d latencies = %s, want %s", 100*c.p, c.n, got, c.want)
		}
	}
}

func TestResultFigures(t *testing.T) {
	r := &result{route: &route{target: 99 * time.Millisecond}, latencies: millis(100), count: 100, errors: 20, elapsed: 4 * time.Second}
	if got := r.max(); got != 100*time.Millisecond {
		t.Errorf("max %s, want 100ms", got)
	}
	if got := r.throughput(); got != 30 { // failed requests were sent too
		t.Errorf("throughput %g req/s, want 30", got)
	}
	if r.passed() {
		t.Error("a route with errors passed")
	}
	r.errors = 0
	if !r.passed() {
		t.Error("p99 99 ms within a 99 ms target, no errors: did not pass")
	}
	r.route.target = 98 * time.Millisecond
	if r.passed() {
		t.Error("p99 99 ms passed a 98 ms target")
	}
	if (&result{route: r.route}).passed() {
		t.Error("a route without answers passed")
	}
	if got := (&result{}).max(); got != 0 {
		t.Errorf("max of no latencies %s, want 0", got)
	}
	if got := (&result{count: 5}).throughput(); got != 0 {
		t.Errorf("throughput without elapsed time %g, want 0", got)
	}
}

func TestMeasureCountsAnswersAndErrors(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "no", http.StatusInternalServerError)
		case "/wrong":
			_, _ = w.Write([]byte(`{"success":false}`))
		default:
			_, _ = w.Write([]byte(`{"success":true,"count":3}`))
		}
	}))
	defer srv.Close()
	routeTo := func(paths ...string) *route {
		return &route{
			name: "test",
			request: func(r *rand.Rand, seq int64) (*http.Request, error) {
				return http.NewRequest(http.MethodGet, srv.URL+paths[int(seq)%len(paths)], nil)
			},
			check: checkSearch,
		}
	}

	res := measure(context.Background(), srv.Client(), routeTo("/ok"), 4, time.Minute, 40, 1)
	if res.count != 40 || res.errors != 0 || served.Load() != 40 {
		t.Fatalf("%d answers, %d errors, %d served; want 40, 0, 40 (the request limit)", res.count, res.errors, served.Load())
	}
	if !slices.IsSorted(res.latencies) || res.latencies[0] <= 0 {
		t.Errorf("latencies not sorted or not positive: %v", res.latencies[:3])
	}
	if res.outcome.searchResults != 120 || res.elapsed <= 0 {
		t.Errorf("%d search results counted (want 120), elapsed %s", res.outcome.searchResults, res.elapsed)
	}

	res = measure(context.Background(), srv.Client(), routeTo("/ok", "/fail", "/wrong"), 3, time.Minute, 30, 1)
	if res.count != 10 || res.errors != 20 {
		t.Errorf("%d answers, %d errors; want 10 and 20", res.count, res.errors)
	}
	if !strings.Contains(res.firstErr, "status 500") && !strings.Contains(res.firstErr, "wrong answer") {
		t.Errorf("first error %q", res.firstErr)
	}

	// The time is up before the request limit.
	start := time.Now()
	res = measure(context.Background(), srv.Client(), routeTo("/ok"), 2, 200*time.Millisecond, 1<<30, 1)
	if took := time.Since(start); took > 5*time.Second || res.count == 0 {
		t.Errorf("a 200 ms measurement took %s and got %d answers", took, res.count)
	}
}

func TestSendChecksStatusAndAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"success":true}`))
	}))
	defer srv.Close()
	get := func(path string) *http.Request {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		return req
	}
	accept := func([]byte, *outcome) error { return nil }
	reject := func([]byte, *outcome) error { return errors.New("not what was asked") }
	if elapsed, err := send(context.Background(), srv.Client(), get("/"), accept, &outcome{}); err != nil || elapsed <= 0 {
		t.Errorf("a good answer: %s, %v", elapsed, err)
	}
	if _, err := send(context.Background(), srv.Client(), get("/missing"), accept, &outcome{}); err == nil || !strings.Contains(err.Error(), "status 404") {
		t.Errorf("a 404 gave %v", err)
	}
	if _, err := send(context.Background(), srv.Client(), get("/"), reject, &outcome{}); err == nil || !strings.Contains(err.Error(), "wrong answer: not what was asked") {
		t.Errorf("a rejected answer gave %v", err)
	}
}
