package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app"
	"mentormemory/config"
)

// environment is what the figures depend on: the machine, the database,
// the app's settings and the data set.
type environment struct {
	when        time.Time
	cpus        int
	cpuModel    string
	memory      string
	goVersion   string
	pgVersion   string
	pgSettings  string
	served      string
	poolMax     int32
	poolNote    string
	execMode    string
	summarizer  string
	archiveAt   int
	dbSize      string
	tables      []tableSize
	loadSeconds float64
	loadedAt    time.Time
	loadShape   string
	resumed     bool
	memoryLoad  string // the memory data set's line, or ""
	users       int
	loadAverage string
}

type tableSize struct {
	name string
	rows int64
	size string
	note string
}

// describe reads what the figures depend on; served says how the app was
// served and app what it runs with.
func describe(ctx context.Context, admin *pgxpool.Pool, served string, info serverInfo, cfg config.Config, databaseURL string, users int) (*environment, error) {
	e := &environment{
		when:       time.Now().UTC(),
		cpus:       runtime.NumCPU(),
		cpuModel:   procField("/proc/cpuinfo", "model name"),
		memory:     procField("/proc/meminfo", "MemTotal"),
		goVersion:  runtime.Version(),
		served:     served,
		poolMax:    info.PoolMax,
		execMode:   info.ExecMode,
		summarizer: info.Summarizer,
		archiveAt:  cfg.Database.ArchiveTurns,
		users:      users,
	}
	if !strings.Contains(databaseURL, "pool_max_conns") {
		e.poolNote = fmt.Sprintf(" (pgxpool's default for %d CPUs)", e.cpus)
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			e.loadAverage = strings.Join(f[:3], " ")
		}
	}
	if kb, err := strconv.ParseFloat(strings.Fields(e.memory + " 0")[0], 64); err == nil && kb > 0 {
		e.memory = fmt.Sprintf("%.1f GiB", kb/(1<<20))
	}
	var sharedBuffers, maxConnections, workMem string
	if err := admin.QueryRow(ctx, `select current_setting('server_version'), current_setting('shared_buffers'),
			current_setting('max_connections'), current_setting('work_mem'),
			pg_size_pretty(pg_database_size(current_database()))`).
		Scan(&e.pgVersion, &sharedBuffers, &maxConnections, &workMem, &e.dbSize); err != nil {
		return nil, err
	}
	e.pgSettings = fmt.Sprintf("shared_buffers %s, work_mem %s, max_connections %s", sharedBuffers, workMem, maxConnections)

	var archivedTurns int64
	// The turns the archives hold, by link or by range (an archive linked
	// before ranges has both since migration 0055, so counting the linked
	// turns and the ranges' counted them twice).
	if err := admin.QueryRow(ctx, `select coalesce(sum(turn_count), 0) from public.conversation_history_archive`).
		Scan(&archivedTurns); err != nil {
		return nil, err
	}
	var memoryLearners, embedded int64
	if err := admin.QueryRow(ctx, `select count(distinct learner_id), count(embedding) from public.learner_memories`).
		Scan(&memoryLearners, &embedded); err != nil {
		return nil, err
	}
	for _, t := range []struct{ name, note string }{
		{"auth.users", ""},
		{"public.learners", ""},
		{"public.conversation_updates", "active conversations"},
		{"public.conversation_turns", ""},
		{"public.conversation_history_archive", ""},
		{"public.search_vocabulary", "filled by the collect_words trigger"},
		{"public.learner_memories", fmt.Sprintf("%s learners, %s with an embedding", thousands(memoryLearners), thousands(embedded))},
		{"public.mentor_sessions", ""},
		{"public.session_openings", ""},
	} {
		ts := tableSize{name: t.name, note: t.note}
		if err := admin.QueryRow(ctx, `select count(*), pg_size_pretty(pg_total_relation_size($1::regclass)) from `+t.name,
			t.name).Scan(&ts.rows, &ts.size); err != nil {
			return nil, err
		}
		if t.name == "public.conversation_turns" {
			ts.note = fmt.Sprintf("%s archived, %s active", thousands(archivedTurns), thousands(ts.rows-archivedTurns))
		}
		e.tables = append(e.tables, ts)
	}

	err := admin.QueryRow(ctx, `select shape, load_seconds, loaded_at, resumed from bench.loads
		where shape not like $1 || '%' order by loaded_at desc limit 1`, memoryShapePrefix).
		Scan(&e.loadShape, &e.loadSeconds, &e.loadedAt, &e.resumed)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	var memoryName string
	var memorySeconds float64
	err = admin.QueryRow(ctx, `select shape, load_seconds from bench.loads
		where shape like $1 || '%' order by loaded_at desc limit 1`, memoryShapePrefix).Scan(&memoryName, &memorySeconds)
	switch {
	case err == nil:
		e.memoryLoad = fmt.Sprintf("memory data set %s loaded in %.1f s", memoryName, memorySeconds)
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, err
	}
	return e, nil
}

// procField returns a field of a /proc file such as "model name", or "?".
func procField(path, field string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	return findField(string(b), field)
}

// findField returns the value of a "key: value" line, or "?".
func findField(text, field string) string {
	for line := range strings.Lines(text) {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == field {
			return strings.TrimSpace(value)
		}
	}
	return "?"
}

func verdict(r *result) string {
	switch {
	case r.count == 0:
		return "FAIL (no answers)"
	case r.errors > 0:
		return fmt.Sprintf("FAIL (%d errors)", r.errors)
	case r.passed():
		return "pass"
	default:
		return "FAIL"
	}
}

func (e *environment) loadLine() string {
	if e.loadShape == "" {
		return "loading time not recorded"
	}
	s := fmt.Sprintf("data set %s loaded in %.1f s on %s", e.loadShape, e.loadSeconds, e.loadedAt.UTC().Format("2006-01-02 15:04 UTC"))
	if e.resumed {
		s += " (a resumed load: the time covers only the last part)"
	}
	if e.memoryLoad != "" {
		s += "; " + e.memoryLoad
	}
	return s
}

// header describes a run: the machine, the database, the app, how the load
// was sent (load) and the data.
func (e *environment) header(load string) []string {
	return []string{
		fmt.Sprintf("Machine: %d CPUs (%s), %s RAM, %s/%s, %s; load average before the run %s",
			e.cpus, e.cpuModel, e.memory, runtime.GOOS, runtime.GOARCH, e.goVersion, e.loadAverage),
		fmt.Sprintf("Postgres: %s (%s), same machine", e.pgVersion, e.pgSettings),
		fmt.Sprintf("App: %s, behind net/http on 127.0.0.1; pgxpool max %d connections%s, %s query mode; %s summarizer; archive every %d turns; GOGC %s",
			e.served, e.poolMax, e.poolNote, e.execMode, e.summarizer, e.archiveAt, gcPercent()),
		"Load: " + load,
		"Data: " + e.loadLine() + "; database size " + e.dbSize,
	}
}

// gcPercent is the garbage collector setting the run used, as app.TuneGC
// chose it.
func gcPercent() string {
	if v := os.Getenv("GOGC"); v != "" {
		return v + " (from GOGC)"
	}
	return strconv.Itoa(app.ServerGCPercent)
}

// report prints a run's figures and writes them, as Markdown, to c.Out.
func report(stdout io.Writer, e *environment, c RunConfig, results []*result) error {
	tableHeader := []string{"table", "rows", "size (with indexes)", ""}
	var tableRows [][]string
	for _, t := range e.tables {
		tableRows = append(tableRows, []string{t.name, thousands(t.rows), t.size, t.note})
	}
	routeHeader := []string{"route", "requests", "errors", "req/s", "p50", "p90", "p99", "max", "p99 target", "result",
		"CPU per request: server + Postgres", "CPU: load generator / server / Postgres / other"}
	var routeRows [][]string
	for _, r := range results {
		routeRows = append(routeRows, []string{r.route.name, strconv.Itoa(r.count), strconv.Itoa(r.errors),
			fmt.Sprintf("%.0f", r.throughput()), ms(r.percentile(0.5)), ms(r.percentile(0.9)), ms(r.percentile(0.99)),
			ms(r.max()), "≤ " + ms(r.route.target), verdict(r), cpuPerRequest(r.cpu, r.count), cpuColumn(r.cpu)})
	}
	notes := resultNotes(results)
	header := e.header(fmt.Sprintf("%d concurrent clients over HTTP/1.1 keep-alive, a random facilitator's token per request (%d facilitators); warm-up %s or %d requests, then %s or %d requests per route, whichever first",
		c.Concurrency, e.users, c.Warmup, c.WarmupRequests, c.Duration, c.Requests))

	r := resultsReport{header: header, tables: []table{{tableHeader, tableRows}, {routeHeader, routeRows}}, notes: notes}
	if _, err := io.WriteString(stdout, r.text("Mentor memory benchmark, "+e.when.Format("2006-01-02 15:04 UTC"))); err != nil {
		return err
	}
	// The same figures as Markdown, to paste into the README.
	if err := os.MkdirAll(filepath.Dir(c.Out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(c.Out, []byte(r.markdown("Benchmark, "+e.when.Format("2006-01-02"))), 0o644)
}

// resultNotes says what the answers contained and why any route failed.
func resultNotes(results []*result) []string {
	var notes []string
	for _, r := range results {
		o := r.outcome
		if r.route.note != "" {
			notes = append(notes, fmt.Sprintf("%s: %s.", r.route.name, r.route.note))
		}
		if strings.HasPrefix(r.route.name, "GET search") && r.count > 0 {
			notes = append(notes, fmt.Sprintf("%s: %.1f results per search on average (limit 20); %d of %d searches found nothing.",
				r.route.name, float64(o.searchResults)/float64(r.count), o.searchEmpty, r.count))
		}
		if strings.HasPrefix(r.route.name, "POST") && r.count > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d of %d posts archived a segment; %d summaries stale.",
				r.route.name, o.archived, r.count, o.stale))
		}
		if strings.HasPrefix(r.route.key, "recall-") && r.count > 0 {
			notes = append(notes, fmt.Sprintf("%s: %.1f memories recalled per answer on average, %.1f of them emotional patterns.",
				r.route.name, float64(o.recalled)/float64(r.count), float64(o.emotional)/float64(r.count)))
		}
		if r.errors > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d errors, the first: %s", r.route.name, r.errors, r.firstErr))
		}
		if r.cpu.ok && r.cpu.others > 0.05 {
			notes = append(notes, fmt.Sprintf("%s: other processes took %.0f%% of the machine's CPU while it was measured; its figures are pessimistic.",
				r.route.name, 100*r.cpu.others))
		}
	}
	return notes
}
