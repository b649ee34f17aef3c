package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// tinyDataSet loads a few facilitators with memories through Load, the
// command's own loader, into a fresh database. It returns the database's
// URL and a pool on it, as the superuser the benchmark connects as.
func tinyDataSet(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	c := LoadConfig{
		DatabaseURL: url,
		Shape:       Shape{Facilitators: 4, Archives: 3, TurnsPerArchive: 6, ActiveTurns: 4, Seed: 1},
		Heavy:       HeavyShape{Archives: []int{5, 12}, TurnsPerArchive: 4, Learners: 3},
		Memories:    MemoryShape{Learners: 3, PerLearner: 30},
		Workers:     2,
		Batch:       2,
	}
	if err := Load(context.Background(), c); err != nil {
		t.Fatalf("load: %v", err)
	}
	// A second load finds the data and keeps it.
	if err := Load(context.Background(), c); err != nil {
		t.Fatalf("second load: %v", err)
	}
	admin, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	return url, admin
}

func TestLoadAndMeasureEveryRoute(t *testing.T) {
	ctx := context.Background()
	url, admin := tinyDataSet(t)
	var users, turns, memories, loads int
	if err := admin.QueryRow(ctx, `select (select count(*) from auth.users where email like 'bench-%'),
			(select count(*) from public.conversation_turns t join auth.users u on u.id = t.facilitator_id where u.email like 'bench-%'),
			(select count(*) from public.learner_memories), (select count(*) from bench.loads)`).
		Scan(&users, &turns, &memories, &loads); err != nil {
		t.Fatal(err)
	}
	// 4 × (3 × 6 archived + 3 live conversations of about 4 turns); the
	// conversations, the two heavy tenants and the memories recorded.
	if users != 4 || turns < 4*(18+3*2) || memories != 90 || loads != 4 {
		t.Errorf("loaded %d users, %d turns, %d memories, %d loads recorded; want 4, at least 96, 90, 4", users, turns, memories, loads)
	}

	dir := t.TempDir()
	c := RunConfig{DatabaseURL: url, Concurrency: 2, Duration: 5 * time.Second, Requests: 30,
		Warmup: time.Second, WarmupRequests: 5, Archiving: 4, Seed: 1,
		Out: filepath.Join(dir, "results.md"), ServerLog: filepath.Join(dir, "server.log")}
	env, results, err := measureRoutes(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(RouteKeys) {
		t.Fatalf("%d routes measured, want all %d", len(results), len(RouteKeys))
	}
	for _, r := range results {
		want := c.Requests
		if r.route.key == "post-archive" {
			want = 4 // one post per primed conversation
		}
		p50, p90, p99 := r.percentile(0.5), r.percentile(0.9), r.percentile(0.99)
		switch {
		case r.errors > 0:
			t.Errorf("%s: %d errors, the first: %s", r.route.name, r.errors, r.firstErr)
		case r.count != want:
			t.Errorf("%s: %d answers, want %d", r.route.name, r.count, want)
		case p50 <= 0 || p50 > p90 || p90 > p99 || p99 > r.max() || r.max() > 5*time.Second:
			t.Errorf("%s: p50 %s, p90 %s, p99 %s, max %s: not in order", r.route.name, p50, p90, p99, r.max())
		case r.throughput() <= 0:
			t.Errorf("%s: throughput %g", r.route.name, r.throughput())
		}
		o := r.outcome
		switch r.route.key {
		case "post-archive":
			if o.archived != r.count {
				t.Errorf("%s: %d of %d posts archived", r.route.name, o.archived, r.count)
			}
		case "recall-light", "recall-deep":
			if o.recalled == 0 {
				t.Errorf("%s recalled no memories", r.route.name)
			}
		}
	}

	var stdout strings.Builder
	if err := report(&stdout, env, c, results); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		row := fmt.Sprintf("| %s | %d | 0 |", r.route.name, r.count)
		if !strings.Contains(stdout.String(), r.route.name) || !strings.Contains(string(md), row) {
			t.Errorf("the report lacks %q:\n%s", row, md)
		}
	}
	if !strings.Contains(string(md), "| `public.learner_memories` | 90 |") {
		t.Errorf("the report lacks the memories' table row:\n%s", md)
	}
}

// The heavy tenants are loaded beside the data set, each one facilitator
// with as many archived conversations as its size and a class of
// learners, and their routes are measured only when named.
func TestHeavyTenantsAreLoadedBesideTheDataSetAndMeasuredApart(t *testing.T) {
	ctx := context.Background()
	url, admin := tinyDataSet(t)
	for _, size := range []int{5, 12} {
		var archives, turns, learners, live int
		if err := admin.QueryRow(ctx, `select
				(select count(*) from public.conversation_history_archive a where a.facilitator_id = u.id),
				(select count(*) from public.conversation_turns t where t.facilitator_id = u.id and t.archive_id is not null),
				(select count(*) from public.learners l where l.facilitator_id = u.id),
				(select count(*) from public.conversation_updates c where c.facilitator_id = u.id)
			from auth.users u where u.email = $1`, fmt.Sprintf("heavy-%d@bench.invalid", size)).
			Scan(&archives, &turns, &learners, &live); err != nil {
			t.Fatalf("heavy tenant of %d: %v", size, err)
		}
		if archives != size || turns != 4*size || learners != 3 || live != 4 {
			t.Errorf("heavy tenant of %d: %d archived conversations of %d turns in all, %d learners, %d live conversations; want %d, %d, 3, 4",
				size, archives, turns, learners, live, size, 4*size)
		}
	}

	dir := t.TempDir()
	c := RunConfig{DatabaseURL: url, Concurrency: 1, Duration: 5 * time.Second, Requests: 10,
		Warmup: time.Second, WarmupRequests: 2, Seed: 1, Routes: "heavy",
		Out: filepath.Join(dir, "results.md"), ServerLog: filepath.Join(dir, "server.log")}
	_, results, err := measureRoutes(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range results {
		keys = append(keys, r.route.key)
		if r.errors > 0 || r.count != c.Requests {
			t.Errorf("%s: %d answers, %d errors (%s)", r.route.name, r.count, r.errors, r.firstErr)
		}
	}
	if want := []string{"search-5", "get-5", "search-12", "get-12"}; !slices.Equal(keys, want) {
		t.Errorf("-routes heavy measured %v, want %v", keys, want)
	}

	c.Routes = "search-12"
	if _, results, err = measureRoutes(ctx, c); err != nil || len(results) != 1 || results[0].route.key != "search-12" {
		t.Errorf("-routes search-12 measured %d routes (%v)", len(results), err)
	}
}

// The per-route run serves the app from a process of its own, so that the
// server's CPU time is read apart from the load generator's; stopping it
// ends that process.
func TestTheRunsServerIsAProcessOfItsOwn(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	_, env, err := benchConfig(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(t.TempDir(), "server.pprof")
	served, err := startServerProcess(ctx, env, filepath.Join(t.TempDir(), "server.log"), profile, 2)
	if err != nil {
		t.Fatal(err)
	}
	if served.pid == os.Getpid() || served.info.PoolMax < 1 || served.info.Summarizer != "offline" {
		t.Errorf("server pid %d (this process %d), %+v", served.pid, os.Getpid(), served.info)
	}
	before := sampleCPU(ctx, nil, false, served.pid)
	if !before.ok || before.server == 0 {
		t.Errorf("the server's CPU time was not read apart from this process's: %+v", before)
	}
	if err := healthy(ctx, served.client, served.base); err != nil {
		t.Error(err)
	}
	served.stop()
	if _, ok := processTicks(strconv.Itoa(served.pid)); ok {
		t.Errorf("the server process %d runs on after stop", served.pid)
	}
	if info, err := os.Stat(profile); err != nil || info.Size() == 0 {
		t.Errorf("no CPU profile of the server: %v", err)
	}
}

func TestClientsKeepEveryTurn(t *testing.T) {
	ctx := context.Background()
	url, admin := tinyDataSet(t)
	facilitators, err := benchFacilitators(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := ClientsConfig{DatabaseURL: url, Clients: 3, Duration: 3 * time.Second,
		ThinkMin: 50 * time.Millisecond, ThinkMax: 150 * time.Millisecond, Modes: "offline,model",
		ModelLatency: 600 * time.Millisecond, Seed: 1,
		Out: filepath.Join(dir, "results.md"), ServerLog: filepath.Join(dir, "server.log")}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	for i, mode := range c.modes() {
		run, err := runClientMode(ctx, admin, facilitators, c, mode, uint64(i), false)
		if err != nil {
			t.Fatalf("%s mode: %v", mode, err)
		}
		if len(run.failures) > 0 {
			t.Errorf("%s mode failed: %s", mode, strings.Join(run.failures, "; "))
		}
		v := run.checked
		if run.all.errors > 0 || run.post.count == 0 || v.acked != 2*run.post.count || v.storedOnce != v.acked {
			t.Errorf("%s mode: %d errors (%v), %d posts, %d turns acknowledged, %d stored once",
				mode, run.all.errors, run.errors, run.post.count, v.acked, v.storedOnce)
		}
		var stdout strings.Builder
		if err := run.report(&stdout, c); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout.String(), "Result: pass") {
			t.Errorf("%s mode's report:\n%s", mode, stdout.String())
		}
	}
	md, err := os.ReadFile(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(md), "-client load run, "); n != 2 {
		t.Errorf("%d runs in the Markdown file, want both modes appended:\n%s", n, md)
	}
}

// Before it serves, the run's server parses the summaries that settled
// since the last run, as a deployment's worker would have, so that
// searches do not parse them again on every request.
func TestTheRunsServerParsesSettledSummariesBeforeItServes(t *testing.T) {
	ctx := context.Background()
	url, admin := tinyDataSet(t)
	for _, q := range []string{
		`update public.conversation_updates set summary_vector = null where summary <> ''`,
		`insert into private.summary_vectors_due (facilitator_id, conversation_id, listed_at)
			select facilitator_id, id, now() - interval '1 minute' from public.conversation_updates where summary <> ''
			on conflict (facilitator_id, conversation_id) do update set listed_at = excluded.listed_at`,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var settled int
	if err := admin.QueryRow(ctx, `select count(*) from private.summary_vectors_due`).Scan(&settled); err != nil || settled == 0 {
		t.Fatalf("%d summaries listed as settled (%v), want some", settled, err)
	}
	_, env, err := benchConfig(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	served, err := startServerProcess(ctx, env, filepath.Join(t.TempDir(), "server.log"), "", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer served.stop()
	var unparsed, listed int
	if err := admin.QueryRow(ctx, `select (select count(*) from public.conversation_updates where summary <> '' and summary_vector is null),
		(select count(*) from private.summary_vectors_due)`).Scan(&unparsed, &listed); err != nil {
		t.Fatal(err)
	}
	if unparsed != 0 || listed != 0 {
		t.Errorf("once serving: %d of %d settled summaries unparsed, %d still listed", unparsed, settled, listed)
	}
}
