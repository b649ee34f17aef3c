package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testReport = resultsReport{
	header: []string{"Machine: 2 CPUs", "Load: 8 clients"},
	tables: []table{{
		header: []string{"route", "requests", "p99", "result"},
		rows: [][]string{
			{"GET conversation (general)", "12,345", "1.25 ms", "pass"},
			{"public.learners", "7", "≤ 15.00 ms", "FAIL (2 errors)"},
		},
	}},
	notes: []string{"GET search: 3.0 results per search on average."},
}

func TestReportAsText(t *testing.T) {
	want := `
Run of today
  Machine: 2 CPUs
  Load: 8 clients

route                       requests         p99  result
GET conversation (general)    12,345     1.25 ms  pass
public.learners                    7  ≤ 15.00 ms  FAIL (2 errors)

  - GET search: 3.0 results per search on average.
`
	if got := testReport.text("Run of today"); got != want {
		t.Errorf("text report:\n%s\nwant:\n%s", got, want)
	}
}

func TestReportAsMarkdown(t *testing.T) {
	want := "### Run of today\n\n" +
		"- Machine: 2 CPUs\n- Load: 8 clients\n\n" +
		"| route | requests | p99 | result |\n" +
		"|---|--:|--:|---|\n" +
		"| GET conversation (general) | 12,345 | 1.25 ms | pass |\n" +
		"| `public.learners` | 7 | ≤ 15.00 ms | FAIL (2 errors) |\n" +
		"\n- GET search: 3.0 results per search on average.\n"
	if got := testReport.markdown("Run of today"); got != want {
		t.Errorf("Markdown report:\n%s\nwant:\n%s", got, want)
	}
}

func TestFigures(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{thousands(0), "0"},
		{thousands(999), "999"},
		{thousands(1000), "1,000"},
		{thousands(1234567), "1,234,567"},
		{thousands(-123), "-123"},
		{thousands(-1234), "-1,234"},
		{ms(1234567 * time.Nanosecond), "1.23 ms"},
		{ms(20 * time.Millisecond), "20.00 ms"},
		{ms(0), "0.00 ms"},
		{mib(3 << 20), "3 MiB"},
		{cpuColumn(cpuUse{}), "n/a"},
		{cpuColumn(cpuUse{ok: true, self: 0.42, postgres: 0.305, others: 0.02}), "42% / 30% / 2%"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	rt := &route{target: 5 * time.Millisecond}
	for _, c := range []struct {
		r    *result
		want string
	}{
		{&result{route: rt}, "FAIL (no answers)"},
		{&result{route: rt, count: 100, latencies: millis(100), errors: 3}, "FAIL (3 errors)"},
		{&result{route: rt, count: 100, latencies: millis(100)}, "FAIL"},
		{&result{route: rt, count: 4, latencies: millis(4)}, "pass"},
	} {
		if got := verdict(c.r); got != c.want {
			t.Errorf("verdict %q, want %q", got, c.want)
		}
	}
}

func TestResultNotes(t *testing.T) {
	notes := resultNotes([]*result{
		{route: &route{name: "GET search (include_archive)"}, count: 4, outcome: &outcome{searchResults: 10, searchEmpty: 1}},
		{route: &route{name: "POST 2 turns", note: "each request archives"}, count: 10, outcome: &outcome{archived: 10, stale: 2}},
		{route: &route{key: "recall-deep", name: "GET recall (deep)"}, count: 2, outcome: &outcome{recalled: 30, emotional: 3},
			errors: 1, firstErr: "status 500"},
		{route: &route{name: "GET opening"}, count: 1, outcome: &outcome{}, cpu: cpuUse{ok: true, others: 0.25}},
	})
	want := []string{
		"GET search (include_archive): 2.5 results per search on average (limit 20); 1 of 4 searches found nothing.",
		"POST 2 turns: each request archives.",
		"POST 2 turns: 10 of 10 posts archived a segment; 2 summaries stale.",
		"GET recall (deep): 15.0 memories recalled per answer on average, 1.5 of them emotional patterns.",
		"GET recall (deep): 1 errors, the first: status 500",
		"GET opening: other processes took 25% of the machine's CPU while it was measured; its figures are pessimistic.",
	}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
}

func TestRunReportWritesTextAndMarkdown(t *testing.T) {
	e := &environment{when: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), cpus: 2, users: 3,
		tables: []tableSize{{name: "public.conversation_turns", rows: 1234567, size: "1 GB", note: "all archived"}}}
	rt := &route{name: "GET conversation (general)", target: 5 * time.Millisecond}
	// Over one second of two CPUs, the server took a fifth and Postgres a
	// tenth: 0.6 CPU-seconds for 4 requests.
	cpu := cpuUse{ok: true, seconds: 2, busy: 0.4, self: 0.1, server: 0.2, postgres: 0.1}
	results := []*result{{route: rt, count: 4, latencies: millis(4), elapsed: time.Second, outcome: &outcome{}, cpu: cpu}}
	c := RunConfig{Concurrency: 8, Out: filepath.Join(t.TempDir(), "results", "bench.md")}
	var stdout strings.Builder
	if err := report(&stdout, e, c, results); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Mentor memory benchmark, 2026-03-01 12:00 UTC",
		"public.conversation_turns  1,234,567",
		"GET conversation (general)         4       0      4  2.00 ms  4.00 ms  4.00 ms  4.00 ms   ≤ 5.00 ms    pass",
		"  150.00 ms (100.00 + 50.00)  ", "  10% / 20% / 10% / 0%",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("printed report lacks %q:\n%s", want, stdout.String())
		}
	}
	md, err := os.ReadFile(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"### Benchmark, 2026-03-01\n",
		"| `public.conversation_turns` | 1,234,567 | 1 GB | all archived |",
		"| GET conversation (general) | 4 | 0 | 4 | 2.00 ms | 4.00 ms | 4.00 ms | 4.00 ms | ≤ 5.00 ms | pass | 150.00 ms (100.00 + 50.00) | 10% / 20% / 10% / 0% |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestFindField(t *testing.T) {
	meminfo := "MemTotal:       16318496 kB\nMemFree:         1234 kB\n"
	cpuinfo := "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu vme\n"
	for _, c := range []struct{ text, field, want string }{
		{meminfo, "MemTotal", "16318496 kB"},
		{meminfo, "MemFree", "1234 kB"},
		{cpuinfo, "model name", "AMD EPYC 7B13"},
		{cpuinfo, "cache size", "?"},
		{"", "MemTotal", "?"},
	} {
		if got := findField(c.text, c.field); got != c.want {
			t.Errorf("field %q = %q, want %q", c.field, got, c.want)
		}
	}
}
