package bench

import (
	"fmt"
	"math"
	"runtime"
	"testing"
)

func TestParseCPUTimes(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	stat := "cpu  1000 10 300 5000 200 5 15 70 40 0\ncpu0 500 5 150 2500 100 2 7 35 20 0\nintr 123\n"
	s, ok := parseCPUTimes(stat)
	if !ok {
		t.Fatal("a /proc/stat was not read")
	}
	if s.total != 6530 || s.busy != 1330 {
		t.Errorf("total %d, busy %d; want 6530 (steal and guest left out) and 1330 (idle and iowait left out)", s.total, s.busy)
	}
	for _, bad := range []string{"", "intr 1 2 3\n", "cpu 1 2 3\n", "cpu a b c d e f g h\n"} {
		if _, ok := parseCPUTimes(bad); ok {
			t.Errorf("%q read as CPU times", bad)
		}
	}
}

func TestParseProcessTicks(t *testing.T) {
	// pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime …
	for _, c := range []struct {
		stat string
		want uint64
		ok   bool
	}{
		{"4242 (postgres) S 1 4242 4242 0 -1 4194560 100 0 0 0 1500 250 0 0 20 0 1 0", 1750, true},
		// A command name may hold spaces and parentheses.
		{"77 (postgres: bench) idle (x)) R 1 77 77 0 -1 0 0 0 0 0 30 12 0 0", 42, true},
		{"77 postgres S 1", 0, false},
		{"77 (postgres) S 1 2 3", 0, false},
		{"77 (postgres) S 1 77 77 0 -1 0 0 0 0 0 x 12 0 0", 0, false},
	} {
		got, ok := parseProcessTicks(c.stat)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %d, %v; want %d, %v", c.stat, got, ok, c.want, c.ok)
		}
	}
}

func TestCPUBetween(t *testing.T) {
	// Ten seconds of every CPU, in ticks of 1/100 s.
	span := uint64(1000 * runtime.NumCPU())
	a := cpuSample{ok: true, total: 50_000, busy: 10_000, self: 2_000, server: 300, postgres: map[int]uint64{10: 500, 11: 800}}
	b := cpuSample{ok: true, total: 50_000 + span, busy: 10_000 + span/2, self: 2_000 + span/10, server: 300 + span/5,
		// 11 ended, 12 started meanwhile and counts from 0.
		postgres: map[int]uint64{10: 500 + span/10, 12: span / 20}}
	u := cpuBetween(a, b)
	near := func(x, want float64) bool { return math.Abs(x-want) < 0.001 }
	if !u.ok || !near(u.busy, 0.5) || !near(u.self, 0.1) || !near(u.server, 0.2) || !near(u.postgres, 0.15) || !near(u.others, 0.05) ||
		!near(u.seconds, float64(10*runtime.NumCPU())) {
		t.Errorf("shares %+v; want busy 0.5, self 0.1, server 0.2, postgres 0.15, others 0.05, over %d CPU-seconds", u, 10*runtime.NumCPU())
	}
	// 700 requests over those ten seconds: the server and Postgres spent
	// 35% of all CPUs' time on them.
	if got, want := cpuPerRequest(u, 700), fmt.Sprintf("%.2f ms (%.2f + %.2f)",
		0.35*u.seconds*1000/700, 0.2*u.seconds*1000/700, 0.15*u.seconds*1000/700); got != want {
		t.Errorf("per request %q, want %q", got, want)
	}
	if got := cpuPerRequest(cpuUse{}, 700); got != "n/a" {
		t.Errorf("per request without a reading %q, want n/a", got)
	}

	short := b
	short.total = a.total + span/20 // half a second: too short to tell
	if cpuBetween(a, short).ok {
		t.Error("half a second of counters gave figures")
	}
	if cpuBetween(cpuSample{}, b).ok || cpuBetween(a, cpuSample{}).ok {
		t.Error("a failed reading gave figures")
	}

	// Rounding can make the named processes add up to more than the
	// machine's busy time; the rest is then none, not negative.
	over := b
	over.busy = a.busy + span/4
	if u := cpuBetween(a, over); u.others != 0 {
		t.Errorf("others %g, want 0", u.others)
	}
}
