package apptest

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Scrape is one answer of GET /metrics, in Prometheus's text format.
type Scrape string

// Scrape reads the service's metrics as the operator's scraper does, with
// Options.Web.MetricsToken, which must be set.
func (s *Service) Scrape(tb testing.TB) Scrape {
	tb.Helper()
	if s.metricsToken == "" {
		tb.Fatal("Scrape needs Options.Web.MetricsToken")
	}
	res := Client{URL: s.URL}.Do(tb, Request{Method: http.MethodGet, Path: "/metrics", Token: s.metricsToken})
	if res.Status != http.StatusOK {
		tb.Fatalf("GET /metrics: %d %s", res.Status, res.Raw)
	}
	return Scrape(res.Raw)
}

// Value is the value of the series named exactly, its name and labels as
// the format writes them (`mentor_db_reads_total{reason="fresh",target="replica"}`),
// or 0 when the scrape has no such series (a counter not counted yet).
func (p Scrape) Value(series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(string(p))
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	return v
}

// Reads is how many of the reads a read replica may answer were served by
// target (metrics.ReadOnReplica, metrics.ReadOnPrimary) for reason.
func (p Scrape) Reads(target, reason string) float64 {
	return p.Value(`mentor_db_reads_total{reason="` + reason + `",target="` + target + `"}`)
}

// WaitForReplica waits until the service's read replica is in service, as
// its last probe found it, or until it is out of it (up false); it fails
// the test after 30 seconds.
func (s *Service) WaitForReplica(tb testing.TB, up bool) {
	tb.Helper()
	want := 0.0
	if up {
		want = 1
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		scrape := s.Scrape(tb)
		if scrape.Value("mentor_db_replica_up") == want && strings.Contains(string(scrape), "mentor_db_replica_up ") {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the read replica's mentor_db_replica_up is not %v after 30 s:\n%s", want, scrape)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
