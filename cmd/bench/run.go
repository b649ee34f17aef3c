package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app"
	"mentormemory/auth"
	"mentormemory/config"
	"mentormemory/memory"
	"mentormemory/postgres"
)

const (
	defaultDuration = 20 * time.Second
	defaultWarmup   = 3 * time.Second
	// benchSecret signs the benchmark's tokens; the app verifies them with
	// it, as it verifies Supabase's HS256 tokens in production.
	benchSecret = "bench-secret-that-is-at-least-32-characters-long"
)

type runConfig struct {
	DatabaseURL    string
	Concurrency    int
	Duration       time.Duration
	Requests       int
	Warmup         time.Duration
	WarmupRequests int
	Archiving      int
	Out            string
	ServerLog      string
	Seed           uint64
	Routes         string // comma-separated route keys; empty: all
	CPUProfile     string
}

// facilitator is a benchmark user with a token and the conversations GET,
// search and POST may address.
type facilitator struct {
	id       string
	token    string
	learners []string
	names    []string
}

// routeKeys are the routes -routes can choose, in the order they are
// measured.
var routeKeys = []string{"get", "get-learner", "search", "post", "post-archive", "recall-light", "recall-deep", "opening"}

// route is one kind of request. request builds it from the worker's random
// stream and the request's sequence number (1-based); check reads the
// answer, returning an error for a wrong one.
type route struct {
	key    string // for -routes
	name   string
	target time.Duration
	note   string
	warm   bool
	limit  int // measured requests at most, when smaller than -requests
	// writes marks a route that stores: the database is vacuumed after
	// it, so the next route does not meet autovacuum cleaning up after it.
	writes bool
	// prepare, when set, builds the route just before it is measured.
	prepare func() (*route, error)
	request func(r *rand.Rand, seq int64) (*http.Request, error)
	check   func(body []byte, o *outcome) error
}

// outcome is what a route's answers said beyond their status, for the notes
// under the table.
type outcome struct {
	mu            sync.Mutex
	searchResults int
	searchEmpty   int
	archived      int
	stale         int
	recalled      int // memories in recall answers
	emotional     int // of them, emotional patterns
}

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

func runBench(ctx context.Context, c runConfig) error {
	admin, err := postgres.Open(ctx, c.DatabaseURL)
	if err != nil {
		return err
	}
	defer admin.Close()

	facilitators, err := benchFacilitators(ctx, admin)
	if err != nil {
		return err
	}
	if err := vacuumDatabase(ctx, admin); err != nil {
		return err
	}
	cfg, err := benchConfig(c.DatabaseURL, nil)
	if err != nil {
		return err
	}
	served, err := serveApp(ctx, cfg, c.ServerLog, c.Concurrency)
	if err != nil {
		return err
	}
	defer served.close()
	a, client, base := served.app, served.client, served.base

	env, err := describe(ctx, admin, a, cfg, c.DatabaseURL, len(facilitators))
	if err != nil {
		return err
	}
	localDB, err := databaseIsLocal(ctx, admin)
	if err != nil {
		return err
	}

	routes := benchRoutes(base, facilitators)
	if c.Archiving > 0 {
		// Primed only when its turn comes, so that the plain POST route
		// before it cannot archive the primed conversations first.
		routes = append(routes, &route{key: "post-archive", name: archivingRouteName, prepare: func() (*route, error) {
			primed, err := primeForArchiving(ctx, admin, facilitators, min(c.Archiving, len(facilitators)), cfg.Database.ArchiveTurns, c.Seed)
			if err != nil {
				return nil, fmt.Errorf("priming conversations for the archiving route: %w", err)
			}
			return archivingRoute(base, primed), nil
		}})
	}

	learners, err := benchMemoryLearners(ctx, admin, facilitators)
	if err != nil {
		return err
	}
	if len(learners) == 0 && c.Routes == "" {
		logf("no learner memories loaded (bench load -memories): recall and opening are left out")
	} else {
		routes = append(routes, memoryRoutes(ctx, admin, base, learners)...)
	}

	if c.Routes != "" {
		keep := strings.Split(c.Routes, ",")
		routes = slices.DeleteFunc(routes, func(rt *route) bool { return !slices.Contains(keep, rt.key) })
		if len(routes) == 0 {
			return fmt.Errorf("-routes %q selects nothing (%s)", c.Routes, strings.Join(routeKeys, ", "))
		}
	}
	if c.CPUProfile != "" {
		// The profile covers this process, the app and its clients, over
		// every measured route: where the Go side of a request spends CPU.
		f, err := os.Create(c.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	var results []*result
	for _, rt := range routes {
		if rt.prepare != nil {
			if rt, err = rt.prepare(); err != nil {
				return err
			}
		}
		if rt.warm {
			logf("%s: warming up (%s or %d requests)", rt.name, c.Warmup, c.WarmupRequests)
			measure(ctx, client, rt, c.Concurrency, c.Warmup, c.WarmupRequests, c.Seed+1000)
		}
		limit := c.Requests
		if rt.limit > 0 {
			limit = min(limit, rt.limit)
		}
		logf("%s: measuring (%s or %d requests)", rt.name, c.Duration, limit)
		before := sampleCPU(ctx, admin, localDB)
		res := measure(ctx, client, rt, c.Concurrency, c.Duration, limit, c.Seed)
		res.cpu = cpuBetween(before, sampleCPU(ctx, admin, localDB))
		if err := ctx.Err(); err != nil {
			return err
		}
		logf("%s: %d requests, p50 %s, p99 %s, %d errors", rt.name, res.count,
			ms(res.percentile(0.50)), ms(res.percentile(0.99)), res.errors)
		results = append(results, res)
		if rt.writes {
			if err := vacuumDatabase(ctx, admin); err != nil {
				return err
			}
		}
	}
	return report(env, c, results)
}

// benchFacilitators reads the loaded facilitators and their learners.
func benchFacilitators(ctx context.Context, admin *pgxpool.Pool) ([]*facilitator, error) {
	rows, err := admin.Query(ctx, `select u.id::text,
			coalesce(array_agg(l.id::text order by l.created_at, l.id) filter (where l.id is not null), '{}'),
			coalesce(array_agg(l.name order by l.created_at, l.id) filter (where l.id is not null), '{}')
		from auth.users u
		left join public.learners l on l.facilitator_id = u.id
		where u.email like 'bench-%' || $1
		group by u.id
		order by u.id`, benchEmailDomain)
	if err != nil {
		return nil, err
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*facilitator, error) {
		var f facilitator
		return &f, row.Scan(&f.id, &f.learners, &f.names)
	})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, errors.New("no benchmark data in this database: run `bench load` first")
	}
	for _, f := range list {
		if len(f.learners) == 0 {
			return nil, fmt.Errorf("facilitator %s has no learners: the data set is incomplete", f.id)
		}
		if f.token, err = auth.MintHS256(benchSecret, f.id, "", 2*time.Hour); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// vacuumDatabase settles what earlier runs wrote. Their posts left dead
// row versions behind (each post rewrites its conversation's row twice and
// archiving rewrites 50 turns) and added turns and archived conversations
// the statistics do not count yet. Autovacuum would catch up in time; doing
// it now makes every run start from a settled state instead of measuring
// the last run's leftovers, or autovacuum catching up mid-measurement.
func vacuumDatabase(ctx context.Context, admin *pgxpool.Pool) error {
	start := time.Now()
	if _, err := admin.Exec(ctx, `vacuum (analyze)`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	logf("vacuumed and analyzed the database in %.1f s", time.Since(start).Seconds())
	return nil
}

// benchConfig is the app's configuration as cmd/server reads it from the
// environment, here a fixed one: the benchmark's database and token secret,
// plus model settings when given (without OPENAI_API_KEY, the offline
// summarizer).
func benchConfig(databaseURL string, model map[string]string) (config.Config, error) {
	env := map[string]string{"DATABASE_URL": databaseURL, "SUPABASE_JWT_SECRET": benchSecret}
	maps.Copy(env, model)
	cfg, err := config.FromEnv(func(name string) string { return env[name] })
	if err != nil {
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

// servedApp is the real app serving on loopback, and a client for it.
type servedApp struct {
	app    *app.App
	base   string // http://127.0.0.1:port
	client *http.Client
	close  func()
}

// serveApp builds the app as cmd/server does (its garbage collector
// setting, app.New's own pool, migrations first) and serves it on 127.0.0.1. Its request log goes to
// serverLog. The client keeps up to conns connections open.
func serveApp(ctx context.Context, cfg config.Config, serverLog string, conns int) (*servedApp, error) {
	if err := os.MkdirAll(filepath.Dir(serverLog), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(serverLog)
	if err != nil {
		return nil, err
	}
	app.TuneGC(os.Getenv)
	a, err := app.New(ctx, cfg, slog.New(slog.NewJSONHandler(logFile, nil)))
	if err != nil {
		logFile.Close()
		return nil, err
	}
	closeApp := func() {
		a.Close()
		logFile.Close()
	}
	if _, err := postgres.Migrate(ctx, a.Pool); err != nil {
		closeApp()
		return nil, fmt.Errorf("migrate: %w", err)
	}

	// Loopback only, on a port the kernel picks; served as cmd/server
	// serves it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		closeApp()
		return nil, err
	}
	srv := a.HTTPServer(ln.Addr().String())
	go func() { _ = srv.Serve(ln) }()

	// Keep-alive connections, never through a proxy, no compression: what
	// is measured is the service, not the client.
	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        2 * conns,
			MaxIdleConnsPerHost: 2 * conns,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
	}
	s := &servedApp{app: a, base: "http://" + ln.Addr().String(), client: client}
	s.close = func() {
		client.CloseIdleConnections()
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		closeApp()
	}
	if err := healthy(ctx, client, s.base); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// databaseIsLocal says whether Postgres runs on this machine, so that its
// processes' CPU time can be read.
func databaseIsLocal(ctx context.Context, admin *pgxpool.Pool) (bool, error) {
	var local bool
	err := admin.QueryRow(ctx, `select coalesce(host(inet_server_addr()) in ('127.0.0.1', '::1'), true)`).Scan(&local)
	return local, err
}

func healthy(ctx context.Context, client *http.Client, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /healthz: status %d", resp.StatusCode)
	}
	return nil
}

const memoryPath = "/api/conversation-memory"

func benchRoutes(base string, fs []*facilitator) []*route {
	randomF := func(r *rand.Rand) *facilitator { return fs[r.IntN(len(fs))] }
	return []*route{
		{
			key: "get", name: "GET conversation (general)", target: 5 * time.Millisecond, warm: true,
			request: func(r *rand.Rand, _ int64) (*http.Request, error) { return getMemory(base, randomF(r).token, nil) },
			check:   checkConversation,
		},
		{
			key: "get-learner", name: "GET conversation (learner_id)", target: 5 * time.Millisecond, warm: true,
			request: func(r *rand.Rand, _ int64) (*http.Request, error) {
				f := randomF(r)
				return getMemory(base, f.token, url.Values{"learner_id": {f.learners[r.IntN(len(f.learners))]}})
			},
			check: checkConversation,
		},
		{
			key: "search", name: "GET search (include_archive)", target: 20 * time.Millisecond, warm: true,
			request: func(r *rand.Rand, _ int64) (*http.Request, error) {
				return searchArchive(base, randomF(r).token, searchQueries[r.IntN(len(searchQueries))])
			},
			check: checkSearch,
		},
		{
			key: "post", name: "POST 2 turns (offline summary)", target: 15 * time.Millisecond, warm: true, writes: true,
			request: func(r *rand.Rand, _ int64) (*http.Request, error) {
				f := randomF(r)
				k := r.IntN(len(f.learners) + 1) // 0: general
				var learner *string
				name := ""
				if k > 0 {
					learner, name = &f.learners[k-1], f.names[k-1]
				}
				return postTurns(base+memoryPath, f.token, learner, newExchange(r, name))
			},
			check: checkPost,
		},
	}
}

const archivingRouteName = "POST 2 turns that archive a segment"

// archivingRoute posts to conversations primed to the archive limit, so
// every request also archives a segment: the slow path of POST, which a
// client meets once every 25 posts.
func archivingRoute(base string, primed []primedConversation) *route {
	return &route{
		key:    "post-archive",
		name:   archivingRouteName,
		target: 15 * time.Millisecond,
		writes: true,
		note:   "each request archives 50 turns; one POST in 25 does this in steady use",
		limit:  len(primed),
		request: func(r *rand.Rand, seq int64) (*http.Request, error) {
			p := primed[seq-1]
			return postTurns(base+memoryPath, p.token, nil, newExchange(r, ""))
		},
		check: func(body []byte, o *outcome) error {
			if err := checkPost(body, o); err != nil {
				return err
			}
			if !jsonTrue(body, "archived") {
				return errors.New("the post did not archive a segment")
			}
			return nil
		},
	}
}

// getMemory asks for a conversation, or searches, with these query
// parameters.
func getMemory(base, token string, query url.Values) (*http.Request, error) {
	u := base + memoryPath
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req, nil
}

// searchArchive searches all of the facilitator's conversations, archived
// ones included, as the web client's search box does with "Include
// archive".
func searchArchive(base, token, q string) (*http.Request, error) {
	return getMemory(base, token, url.Values{"search": {q}, "include_archive": {"true"}})
}

func checkConversation(body []byte, _ *outcome) error {
	if !jsonTrue(body, "success") || bytes.Contains(body, []byte(`"conversation_update":null`)) {
		return errors.New("no active conversation returned")
	}
	return nil
}

func checkSearch(body []byte, o *outcome) error {
	count, ok := jsonInt(body, "count")
	if !ok || !jsonTrue(body, "success") {
		return errors.New("not a successful search answer")
	}
	o.mu.Lock()
	o.searchResults += count
	if count == 0 {
		o.searchEmpty++
	}
	o.mu.Unlock()
	return nil
}

func checkPost(body []byte, o *outcome) error {
	if added, _ := jsonInt(body, "turns_added"); !jsonTrue(body, "success") || added != 2 {
		return fmt.Errorf("turns_added %d, want 2: %.200s", added, body)
	}
	o.mu.Lock()
	if jsonTrue(body, "archived") {
		o.archived++
	}
	if jsonTrue(body, "summary_stale") {
		o.stale++
	}
	o.mu.Unlock()
	return nil
}

// The answers are checked by looking for `"key":value` in the body rather
// than decoding it: the clients share the CPU with the app and Postgres, and
// decoding every answer cost a tenth of this process's CPU. A quote inside
// a JSON string is escaped, so such a match is never part of a text.

func jsonTrue(body []byte, key string) bool {
	return bytes.Contains(body, []byte(`"`+key+`":true`))
}

// jsonInt reads the first `"key":<integer>` of the body.
func jsonInt(body []byte, key string) (int, bool) {
	_, rest, ok := bytes.Cut(body, []byte(`"`+key+`":`))
	if !ok {
		return 0, false
	}
	end := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, err := strconv.Atoi(string(rest[:end]))
	return n, err == nil
}

// newExchange writes a parent's message and the mentor's reply, with client
// ids as the web client sends them.
func newExchange(r *rand.Rand, learnerName string) []memory.Turn {
	g := &textGen{r: r}
	t := g.newTopic()
	age := 5 + r.IntN(11)
	// The ids are random, not from r: the same run repeated must post new
	// turns, not resends the service would skip.
	return []memory.Turn{
		{ID: uuid.NewString(), Role: memory.RoleUser, Content: g.turn(memory.RoleUser, &t, learnerName, age)},
		{ID: uuid.NewString(), Role: memory.RoleAssistant, Content: g.turn(memory.RoleAssistant, &t, learnerName, age)},
	}
}

func postTurns(u, token string, learner *string, turns []memory.Turn) (*http.Request, error) {
	body, err := json.Marshal(map[string]any{"learner_id": learner, "conversation_turns": turns})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

type primedConversation struct {
	facilitator string
	token       string
}

// primeForArchiving fills the general conversations of n facilitators up to
// the archive limit, as superuser, so that the next post to each archives a
// segment. The filler turns are summarized already (summarized_turn_id), as
// they would be after normal updates.
func primeForArchiving(ctx context.Context, admin *pgxpool.Pool, fs []*facilitator, n, limit int, seed uint64) ([]primedConversation, error) {
	r := rand.New(rand.NewPCG(seed, 7))
	chosen := slices.Clone(fs)
	r.Shuffle(len(chosen), func(i, j int) { chosen[i], chosen[j] = chosen[j], chosen[i] })
	chosen = chosen[:n]
	ids := make([]string, n)
	for i, f := range chosen {
		ids[i] = f.id
	}

	start := time.Now()
	tx, err := admin.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// The same limit the app's transactions use, so the update below stops
	// exactly at it without archiving.
	if _, err := tx.Exec(ctx, `select set_config('mentor.archive_turns', $1, true)`, strconv.Itoa(limit)); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `select facilitator_id::text, turn_count from public.conversation_updates
		where facilitator_id = any($1::uuid[]) and learner_id is null`, ids)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	var id string
	var count int
	if _, err := pgx.ForEachRow(rows, []any{&id, &count}, func() error { counts[id] = count; return nil }); err != nil {
		return nil, err
	}

	var fill [][]any
	now := time.Now().Add(-time.Hour)
	g := &textGen{r: r}
	for _, f := range chosen {
		c, ok := counts[f.id]
		if !ok {
			return nil, fmt.Errorf("facilitator %s has no general conversation", f.id)
		}
		t := g.newTopic()
		for k := c; k < limit; k++ {
			role := memory.RoleUser
			if k%2 == 1 {
				role = memory.RoleAssistant
			}
			fid := uuid.MustParse(f.id)
			fill = append(fill, []any{fid, role, g.turn(role, &t, "", 10), randomUUID(r).String(),
				now.Add(time.Duration(k) * time.Minute)})
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"public", "conversation_turns"},
		[]string{"facilitator_id", "role", "content", "client_turn_id", "created_at"}, pgx.CopyFromRows(fill)); err != nil {
		return nil, err
	}
	// Count the active turns rather than trust arithmetic, so turn_count
	// keeps its invariant even on a data set earlier runs changed.
	tag, err := tx.Exec(ctx, `update public.conversation_updates c
		set turn_count = x.n, summarized_turn_id = x.last_id, recent_turns = x.recent, updated_at = now()
		from (
			select t.facilitator_id, count(*)::integer as n, max(t.id) as last_id,
				(select jsonb_agg(jsonb_strip_nulls(jsonb_build_object('id', r.client_turn_id, 'role', r.role,
						'content', r.content, 'created_at', r.created_at)) order by r.id)
					from (select * from public.conversation_turns r
						where r.facilitator_id = t.facilitator_id and r.learner_id is null and r.archive_id is null
						order by r.id desc limit 10) r) as recent
			from public.conversation_turns t
			where t.facilitator_id = any($1::uuid[]) and t.learner_id is null and t.archive_id is null
			group by t.facilitator_id
		) x
		where c.facilitator_id = x.facilitator_id and c.learner_id is null and x.n = $2`, ids, limit)
	if err != nil {
		return nil, err
	}
	if int(tag.RowsAffected()) != n {
		return nil, fmt.Errorf("primed %d conversations, want %d", tag.RowsAffected(), n)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	logf("primed %d general conversations to %d active turns (%d turns added) in %.1f s",
		n, limit, len(fill), time.Since(start).Seconds())

	primed := make([]primedConversation, n)
	for i, f := range chosen {
		primed[i] = primedConversation{facilitator: f.id, token: f.token}
	}
	return primed, nil
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

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) + " ms"
}
