package main

import (
	"context"
	"strings"
	"testing"
)

// scripts/bench calls the command with these flags; each call here also
// gets one value the package refuses, so the command stops before it needs
// a database, with the package's error rather than a flag's.
func TestScriptsBenchFlagsParse(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "-facilitators", "1000", "-archives", "100", "-workers", "3", "-memories", "500",
			"-memory-learners", "2000", "-db", "postgres://unused"}, "memory data out of range"},
		{[]string{"run", "-out", "r.md", "-server-log", "s.log", "-routes", "search,post", "-duration", "15s",
			"-concurrency", "0", "-db", "postgres://unused"}, "must be positive"},
		{[]string{"clients", "-out", "r.md", "-server-log", "s.log", "-modes", "model", "-duration", "15s",
			"-think-min", "3s", "-db", "postgres://unused"}, "at most -think-max"},
		{[]string{"rss", "-server", ".data/server", "-label", "base", "-out", "r.md", "-server-log", "s.log",
			"-duration", "0s", "-db", "postgres://unused"}, "-duration must be positive"},
		{[]string{"rss", "-db", "postgres://unused"}, "-server is required"},
		{[]string{"run", "-concurrency", "4"}, "-db or BENCH_DATABASE_URL is required"},
		{[]string{"measure"}, `unknown command "measure"`},
		{nil, "usage: bench load|run|clients"},
	} {
		t.Setenv("BENCH_DATABASE_URL", "")
		err := command(context.Background(), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bench %s: %v, want an error with %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}
