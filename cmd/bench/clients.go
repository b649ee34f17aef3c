package main

// The 50-client load run: web clients as people use them, each a
// facilitator talking with the mentor about one learner (or in general),
// against the real app, with the offline summarizer and then with a slow
// model. Where the per-route run asks how fast each route is, this one asks
// whether the service stays correct and lean under a realistic mix: every
// acknowledged turn stored once, every conversation's counts balanced, no
// database connection or row lock held while the model thinks.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/memory"
	"mentormemory/postgres"
)

type clientsConfig struct {
	DatabaseURL  string
	Clients      int
	Duration     time.Duration // per mode
	ThinkMin     time.Duration
	ThinkMax     time.Duration
	Modes        string // comma-separated: offline, model
	ModelLatency time.Duration
	Out          string
	ServerLog    string
	Seed         uint64
}

const (
	offlineMode = "offline"
	modelMode   = "model"

	// After a reply a client searches one time in searchOneIn and reloads
	// its conversation one time in getOneIn, besides posting the exchange.
	searchOneIn = 10
	getOneIn    = 20

	sampleEvery = 200 * time.Millisecond
	// maxTransaction is the longest a transaction may stay open while the
	// model takes its -model-latency (1 s by default): longer, and the
	// model was asked inside it, holding a connection and the
	// conversation's row lock all that time.
	maxTransaction = 500 * time.Millisecond
	shownErrors    = 5
)

func (c clientsConfig) validate() error {
	switch {
	case c.Clients < 1 || c.Duration <= 0 || c.ModelLatency <= 0:
		return errors.New("-clients, -duration and -model-latency must be positive")
	case c.ThinkMin <= 0 || c.ThinkMax < c.ThinkMin:
		// A think time above zero is also what bounds the requests.
		return errors.New("-think-min must be positive and at most -think-max")
	case c.ModelLatency <= maxTransaction && slices.Contains(c.modes(), modelMode):
		return fmt.Errorf("-model-latency must be above %s, or a model call inside a transaction would go unnoticed", maxTransaction)
	}
	for _, m := range c.modes() {
		if m != offlineMode && m != modelMode {
			return fmt.Errorf("-modes: unknown mode %q (want %s, %s or both)", m, offlineMode, modelMode)
		}
	}
	return nil
}

func (c clientsConfig) modes() []string {
	return strings.Split(c.Modes, ",")
}

// serverLog is the app's request log of one mode: its name before the
// extension, so the second mode does not overwrite the first one's.
func (c clientsConfig) serverLog(mode string) string {
	ext := filepath.Ext(c.ServerLog)
	return strings.TrimSuffix(c.ServerLog, ext) + "-" + mode + ext
}

func runClients(ctx context.Context, c clientsConfig) error {
	if err := c.validate(); err != nil {
		return err
	}
	admin, err := postgres.Open(ctx, c.DatabaseURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	facilitators, err := benchFacilitators(ctx, admin)
	if err != nil {
		return err
	}
	if c.Clients > len(facilitators) {
		return fmt.Errorf("-clients %d: the data set has only %d facilitators, and each client is one of them", c.Clients, len(facilitators))
	}
	localDB, err := databaseIsLocal(ctx, admin)
	if err != nil {
		return err
	}
	for i, mode := range c.modes() {
		run, err := runClientMode(ctx, admin, facilitators, c, mode, uint64(i), localDB)
		if err != nil {
			return fmt.Errorf("%s mode: %w", mode, err)
		}
		if err := run.report(c); err != nil {
			return err
		}
		if len(run.failures) > 0 {
			return fmt.Errorf("%s mode failed:\n  - %s", mode, strings.Join(run.failures, "\n  - "))
		}
	}
	return nil
}

// simClient is one web client: a facilitator with one conversation open,
// and the turns it sent.
type simClient struct {
	f       *facilitator
	learner *string // nil: the general conversation
	name    string  // the learner's name, "" in the general conversation
	acked   []string
	unacked []string // sent in posts that got no successful answer
	// logBefore is the conversation's turns in the log before the run.
	logBefore int
}

// key is the conversation's learner as the schema's indexes key it: the
// nil uuid for the general conversation.
func (sc *simClient) key() string {
	if sc.learner == nil {
		return uuid.Nil.String()
	}
	return *sc.learner
}

// pickClients gives each client a facilitator of its own, so no two share
// a conversation, and one of their conversations.
func pickClients(fs []*facilitator, n int, r *rand.Rand) []*simClient {
	clients := make([]*simClient, n)
	for i, k := range r.Perm(len(fs))[:n] {
		f := fs[k]
		sc := &simClient{f: f}
		if l := r.IntN(len(f.learners) + 1); l > 0 { // 0: general
			sc.learner, sc.name = &f.learners[l-1], f.names[l-1]
		}
		clients[i] = sc
	}
	return clients
}

// clientRun is one mode's run and what it found.
type clientRun struct {
	mode     string
	env      *environment
	clients  []*simClient
	model    *fakeModel // nil in offline mode
	elapsed  time.Duration
	post     *result
	search   *result
	get      *result
	all      *result
	errors   []string // the first few, in order
	cpu      cpuUse
	watch    *watch
	jobs     jobCounts
	workers  int // memory extractions the worker runs at once
	checked  invariants
	failures []string
}

func runClientMode(ctx context.Context, admin *pgxpool.Pool, fs []*facilitator, c clientsConfig, mode string, index uint64, localDB bool) (*clientRun, error) {
	logf("%s mode: %d clients for %s", mode, c.Clients, c.Duration)
	if err := vacuumDatabase(ctx, admin); err != nil {
		return nil, err
	}
	run := &clientRun{mode: mode}
	var modelEnv map[string]string
	if mode == modelMode {
		run.model = newFakeModel(c.ModelLatency, c.Seed)
		defer run.model.close()
		modelEnv = map[string]string{"OPENAI_API_KEY": "bench-fake-key", "OPENAI_BASE_URL": run.model.url()}
		if err := dropQueuedJobs(ctx, admin); err != nil {
			return nil, err
		}
	}
	cfg, err := benchConfig(withApplicationName(c.DatabaseURL, appName), modelEnv)
	if err != nil {
		return nil, err
	}
	run.workers = cfg.Model.Workers
	served, err := serveApp(ctx, cfg, c.serverLog(mode), c.Clients)
	if err != nil {
		return nil, err
	}
	defer served.close()
	a := served.app
	if run.env, err = describe(ctx, admin, a, cfg, c.DatabaseURL, len(fs)); err != nil {
		return nil, err
	}

	// The worker runs beside the server, as in cmd/server; it has work only
	// with a model, which extracts memories from every exchange.
	stopWorker := func() {}
	if mode == modelMode {
		workCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() {
			defer close(done)
			a.Worker.Run(workCtx)
		}()
		// Run finishes the job in hand before it returns.
		stopWorker = func() { cancel(); <-done }
	}
	defer stopWorker()

	// One random stream per mode for the choice of clients, and one per
	// mode and client for what each does.
	run.clients = pickClients(fs, c.Clients, rand.New(rand.NewPCG(c.Seed, index<<32)))
	if err := countLogs(ctx, admin, run.clients); err != nil {
		return nil, err
	}
	jobsBefore, err := lastJobID(ctx, admin)
	if err != nil {
		return nil, err
	}

	cpuBefore := sampleCPU(ctx, admin, localDB)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan *watch)
	go func() { watched <- watchLoad(watchCtx, admin, a.Pool) }()
	run.load(ctx, served, c, index)
	stopWatch()
	run.watch = <-watched
	run.cpu = cpuBetween(cpuBefore, sampleCPU(ctx, admin, localDB))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stopWorker()

	if run.jobs, err = countJobs(ctx, admin, jobsBefore); err != nil {
		return nil, err
	}
	if run.checked, err = checkInvariants(ctx, admin, run.clients); err != nil {
		return nil, err
	}
	run.judge()
	return run, nil
}

// load runs the clients until the time is up: each thinks, gets the
// mentor's reply, posts the exchange and now and then searches or reloads
// its conversation, as the web client does. A request under way when the
// time is up is finished and counted.
func (run *clientRun) load(ctx context.Context, served *servedApp, c clientsConfig, index uint64) {
	summary := "offline summary"
	if run.model != nil {
		summary = fmt.Sprintf("model summary after %s", c.ModelLatency)
	}
	run.post = &result{route: &route{name: "POST 2 turns (" + summary + ")", check: checkPost}, outcome: &outcome{}}
	run.search = &result{route: &route{name: "GET search (include_archive)", check: checkSearch}, outcome: &outcome{}}
	run.get = &result{route: &route{name: "GET conversation", check: checkConversation}, outcome: &outcome{}}
	var mu sync.Mutex
	begin := time.Now()
	deadline := begin.Add(c.Duration)
	record := func(res *result, elapsed time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			res.latencies = append(res.latencies, elapsed)
			return
		}
		res.errors++
		if res.firstErr == "" {
			res.firstErr = err.Error()
		}
		if len(run.errors) < shownErrors {
			run.errors = append(run.errors, fmt.Sprintf("at %.1f s, %s: %v", time.Since(begin).Seconds(), res.route.name, err))
		}
	}

	// ask sends a request a client built and records the answer.
	ask := func(res *result, req *http.Request, err error) error {
		var elapsed time.Duration
		if err == nil {
			elapsed, err = send(ctx, served.client, req, res.route.check, res.outcome)
		}
		record(res, elapsed, err)
		return err
	}

	var wg sync.WaitGroup
	for i, sc := range run.clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(c.Seed, index<<32|uint64(i+1)))
			for {
				think := c.ThinkMin + time.Duration(r.Int64N(int64(c.ThinkMax-c.ThinkMin)+1))
				if time.Now().Add(think).After(deadline) || !sleep(ctx, think) {
					return
				}
				// The mentor replied: the client posts the exchange.
				turns := newExchange(r, sc.name)
				ids := []string{turns[0].ID, turns[1].ID}
				req, err := postTurns(served.base+memoryPath, sc.f.token, sc.learner, turns)
				if ask(run.post, req, err) == nil {
					sc.acked = append(sc.acked, ids...)
				} else {
					sc.unacked = append(sc.unacked, ids...)
				}
				if r.IntN(searchOneIn) == 0 {
					req, err := searchArchive(served.base, sc.f.token, searchQueries[r.IntN(len(searchQueries))])
					_ = ask(run.search, req, err)
				}
				if r.IntN(getOneIn) == 0 {
					query := url.Values{}
					if sc.learner != nil {
						query.Set("learner_id", *sc.learner)
					}
					req, err := getMemory(served.base, sc.f.token, query)
					_ = ask(run.get, req, err)
				}
			}
		})
	}
	wg.Wait()
	run.elapsed = time.Since(begin)

	run.all = &result{route: &route{name: "all requests"}, outcome: &outcome{}}
	for _, res := range []*result{run.post, run.search, run.get} {
		res.elapsed = run.elapsed
		res.count = len(res.latencies)
		slices.Sort(res.latencies)
		run.all.latencies = append(run.all.latencies, res.latencies...)
		run.all.errors += res.errors
	}
	run.all.elapsed = run.elapsed
	run.all.count = len(run.all.latencies)
	slices.Sort(run.all.latencies)
}

// sleep waits for d, or less if ctx ends first; it reports whether the
// whole time passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// fakeModel is an OpenAI-compatible chat server in this process standing
// in for a slow model: it answers every chat completion after latency.
// Summary requests get a summary; extraction requests, the ones asking for
// structured output, get no memories, a valid reply and what a model
// answers for most exchanges.
type fakeModel struct {
	srv         *httptest.Server
	latency     time.Duration
	seed        uint64
	calls       atomic.Uint64
	summaries   atomic.Int64
	extractions atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
}

func newFakeModel(latency time.Duration, seed uint64) *fakeModel {
	m := &fakeModel{latency: latency, seed: seed}
	m.srv = httptest.NewServer(m) // on 127.0.0.1
	return m
}

func (m *fakeModel) url() string { return m.srv.URL }

func (m *fakeModel) close() { m.srv.Close() }

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost || r.URL.Path != "/chat/completions" {
		http.NotFound(w, r)
		return
	}
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for { // raise the maximum unless another call raised it past n meanwhile
		seen := m.maxInFlight.Load()
		if n <= seen || m.maxInFlight.CompareAndSwap(seen, n) {
			break
		}
	}
	if !sleep(r.Context(), m.latency) {
		return
	}
	// Only extraction sets a response format. A quote inside the prompt's
	// text is escaped, so no turn can match this.
	content := `{"memories": []}`
	if bytes.Contains(body, []byte(`"response_format"`)) {
		m.extractions.Add(1)
	} else {
		m.summaries.Add(1)
		content = m.summary()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-bench", "object": "chat.completion", "created": time.Now().Unix(), "model": "bench-fake",
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": content, "refusal": nil},
		}},
	})
}

// summary writes a different summary each call, two of the mentor's
// replies on one topic (4 to 10 sentences), so that the summaries search
// indexes vary as real ones do.
func (m *fakeModel) summary() string {
	g := &textGen{r: rand.New(rand.NewPCG(m.seed, m.calls.Add(1)))}
	t := g.newTopic()
	return g.turn(memory.RoleAssistant, &t, "", 10) + " " + g.turn(memory.RoleAssistant, &t, "", 10)
}

// watch is what the sampler saw while the clients ran: the database's open
// transactions, the app's pool and this process's memory.
type watch struct {
	samples     int
	err         error // the first failed sample
	maxIdleInTx int
	maxOthers   int // busy sessions on the database that are not the app's
	longestTx   time.Duration
	longestWhat string // the longest transaction's state and statement
	maxAcquired int32
	maxOpen     int32
	poolMax     int32
	waited      int64 // acquires that found no idle connection
	waitTime    time.Duration
	hwmReset    bool
	peakRSS     uint64 // bytes
	maxRSS      uint64
	maxHeap     uint64
}

// watchLoad samples until ctx ends.
func watchLoad(ctx context.Context, admin, appPool *pgxpool.Pool) *watch {
	w := &watch{poolMax: appPool.Config().MaxConns}
	// The kernel keeps the peak RSS since the process started; resetting
	// it makes it this mode's peak (Linux 4.0 and later).
	w.hwmReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	start := appPool.Stat()
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		w.sample(ctx, admin, appPool)
		select {
		case <-tick.C:
		case <-ctx.Done():
			end := appPool.Stat()
			w.waited = end.EmptyAcquireCount() - start.EmptyAcquireCount()
			w.waitTime = end.EmptyAcquireWaitTime() - start.EmptyAcquireWaitTime()
			w.peakRSS = statusBytes("VmHWM")
			return w
		}
	}
}

func (w *watch) sample(ctx context.Context, admin, appPool *pgxpool.Pool) {
	// The app's sessions are told by their application_name from anyone
	// else's on the database: another benchmark's vacuum, say, would pass
	// for a long transaction of the app. Those others are only counted, as
	// a warning that they shared the machine. The ages are taken at this
	// statement's start, before the activity is read: on a busy machine
	// this backend may wait for the CPU after reading it, and a later clock
	// would age every transaction by that wait.
	var idle, others int
	var longest float64
	var what string
	err := admin.QueryRow(ctx, `select
			count(*) filter (where application_name = $1 and state = 'idle in transaction'),
			coalesce(extract(epoch from max(statement_timestamp() - xact_start) filter (where application_name = $1)), 0)::float8,
			coalesce((array_agg(concat_ws(': ', coalesce(state, 'starting'), wait_event_type || ' ' || wait_event,
				left(query, 300)) order by xact_start) filter (where application_name = $1 and xact_start is not null))[1], ''),
			count(*) filter (where application_name <> $1 and state is distinct from 'idle')
		from pg_stat_activity
		where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()`,
		appName).Scan(&idle, &longest, &what, &others)
	switch {
	case err == nil:
		w.samples++
		w.maxIdleInTx = max(w.maxIdleInTx, idle)
		w.maxOthers = max(w.maxOthers, others)
		if d := time.Duration(longest * float64(time.Second)); d > w.longestTx {
			w.longestTx, w.longestWhat = d, what
		}
	case ctx.Err() == nil && w.err == nil:
		w.err = err
	}
	s := appPool.Stat()
	w.maxAcquired = max(w.maxAcquired, s.AcquiredConns())
	w.maxOpen = max(w.maxOpen, s.TotalConns())
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	w.maxHeap = max(w.maxHeap, mem.HeapInuse)
	w.maxRSS = max(w.maxRSS, statusBytes("VmRSS"))
}

// statusBytes reads a size of /proc/self/status such as VmRSS; 0 where
// there is none.
func statusBytes(field string) uint64 {
	kb, _ := strconv.ParseUint(strings.TrimSuffix(procField("/proc/self/status", field), " kB"), 10, 64)
	return kb << 10
}

// appName is the application_name of the app's database sessions.
const appName = "mentor-bench-clients"

// withApplicationName sets application_name in a connection string, a URL
// or key=value pairs (where the last of a repeated key counts).
func withApplicationName(databaseURL, name string) string {
	u, err := url.Parse(databaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return databaseURL + " application_name=" + name
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// conversationOf selects a conversation's rows by facilitator ($1) and
// learner ($2, the nil uuid for the general conversation), with the
// expression the schema's indexes use.
const conversationOf = `facilitator_id = $1::uuid
	and coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid) = $2::uuid`

// countLogs counts each client's conversation's turns before the run.
func countLogs(ctx context.Context, admin *pgxpool.Pool, clients []*simClient) error {
	for _, sc := range clients {
		if err := admin.QueryRow(ctx, `select count(*) from public.conversation_turns where `+conversationOf,
			sc.f.id, sc.key()).Scan(&sc.logBefore); err != nil {
			return err
		}
	}
	return nil
}

// dropQueuedJobs deletes the extraction jobs earlier model runs left
// queued. The worker takes the oldest first, so it would spend this run on
// them, and the backlog would grow with every run.
func dropQueuedJobs(ctx context.Context, admin *pgxpool.Pool) error {
	tag, err := admin.Exec(ctx, `delete from public.memory_jobs
		where status in ('pending', 'running')
			and facilitator_id in (select id from auth.users where email like '%' || $1)`, benchEmailDomain)
	if err != nil {
		return err
	}
	if n := tag.RowsAffected(); n > 0 {
		logf("dropped %d extraction jobs earlier runs left queued", n)
	}
	return nil
}

func lastJobID(ctx context.Context, admin *pgxpool.Pool) (int64, error) {
	var id int64
	err := admin.QueryRow(ctx, `select coalesce(max(id), 0) from public.memory_jobs`).Scan(&id)
	return id, err
}

// jobCounts are the extraction jobs the run queued, by what became of them.
type jobCounts struct {
	queued, done, waiting, failed int
}

func countJobs(ctx context.Context, admin *pgxpool.Pool, after int64) (jobCounts, error) {
	var j jobCounts
	err := admin.QueryRow(ctx, `select count(*), count(*) filter (where status = 'done'),
			count(*) filter (where status in ('pending', 'running')), count(*) filter (where status = 'failed')
		from public.memory_jobs where id > $1`, after).Scan(&j.queued, &j.done, &j.waiting, &j.failed)
	return j, err
}

// invariants is what the database holds for the clients' conversations
// after a run, as superuser (no row-level security in the way).
type invariants struct {
	conversations int
	acked         int // turns acknowledged by a successful post
	storedOnce    int // of them, in the log exactly once
	missing       int
	twice         int // acknowledged or not, in the log more than once
	unacked       int // turns of failed posts
	unackedStored int
	grown         int // turns the logs grew by
	logTurns      int
	archived      int // archive rows' turn_count, summed
	active        int // conversation_updates.turn_count, summed
	problems      []string
}

func checkInvariants(ctx context.Context, admin *pgxpool.Pool, clients []*simClient) (invariants, error) {
	var v invariants
	for _, sc := range clients {
		var logTurns, unarchived, active, archived int
		if err := admin.QueryRow(ctx, `select
				(select count(*) from public.conversation_turns where `+conversationOf+`),
				(select count(*) from public.conversation_turns where `+conversationOf+` and archive_id is null),
				(select coalesce(sum(turn_count), 0) from public.conversation_updates where `+conversationOf+`),
				(select coalesce(sum(turn_count), 0) from public.conversation_history_archive where `+conversationOf+`)`,
			sc.f.id, sc.key()).Scan(&logTurns, &unarchived, &active, &archived); err != nil {
			return v, err
		}
		rows, err := admin.Query(ctx, `select client_turn_id, count(*)::integer from public.conversation_turns
			where `+conversationOf+` and client_turn_id = any($3::text[])
			group by client_turn_id`, sc.f.id, sc.key(), slices.Concat(sc.acked, sc.unacked))
		if err != nil {
			return v, err
		}
		stored := map[string]int{}
		var id string
		var n int
		if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { stored[id] = n; return nil }); err != nil {
			return v, err
		}

		conversation := "facilitator " + sc.f.id + ", " + cmp.Or(sc.name, "general conversation")
		sentStored, missing := 0, 0
		for _, id := range sc.acked {
			switch stored[id] {
			case 0:
				missing++
			case 1:
				v.storedOnce++
			}
		}
		for _, n := range stored {
			sentStored += n
			if n > 1 {
				v.twice++
			}
		}
		for _, id := range sc.unacked {
			v.unackedStored += min(stored[id], 1)
		}
		grown := logTurns - sc.logBefore
		if missing > 0 {
			v.problems = append(v.problems, fmt.Sprintf("%s: %d acknowledged turns are not in the log", conversation, missing))
		}
		if grown != sentStored {
			v.problems = append(v.problems, fmt.Sprintf("%s: the log grew by %d turns, but %d of the turns the client sent are in it",
				conversation, grown, sentStored))
		}
		if archived+active != logTurns || active != unarchived {
			v.problems = append(v.problems, fmt.Sprintf("%s: archived %d + active %d turns, but %d in the log (%d not archived)",
				conversation, archived, active, logTurns, unarchived))
		}
		v.conversations++
		v.acked += len(sc.acked)
		v.missing += missing
		v.unacked += len(sc.unacked)
		v.grown += grown
		v.logTurns += logTurns
		v.archived += archived
		v.active += active
	}
	if v.twice > 0 {
		v.problems = append(v.problems, fmt.Sprintf("%d turns are in the log more than once", v.twice))
	}
	return v, nil
}

// judge lists what fails the run: a broken invariant, no successful post,
// and with the model, a transaction open while it thought (or no proof
// that none was).
func (run *clientRun) judge() {
	run.failures = append(run.failures, run.checked.problems...)
	if run.post.count == 0 {
		run.failures = append(run.failures, "no post succeeded")
	}
	if run.model == nil {
		return
	}
	w := run.watch
	switch {
	case w.err != nil:
		run.failures = append(run.failures, fmt.Sprintf("watching pg_stat_activity failed: %v", w.err))
	case w.samples == 0:
		run.failures = append(run.failures, "pg_stat_activity was never sampled")
	case w.longestTx > maxTransaction:
		run.failures = append(run.failures, fmt.Sprintf("a transaction stayed open %s (limit %s) while the model took %s: the model was asked inside it; it was %q",
			ms(w.longestTx), ms(maxTransaction), run.model.latency, w.longestWhat))
	}
	if run.model.summaries.Load() == 0 || run.model.extractions.Load() == 0 {
		run.failures = append(run.failures, fmt.Sprintf("the model wrote %d summaries and ran %d extractions: both must run for this mode to mean anything",
			run.model.summaries.Load(), run.model.extractions.Load()))
	}
}

func (run *clientRun) report(c clientsConfig) error {
	e := run.env
	header := e.header(fmt.Sprintf("%d web clients for %s, each a facilitator (of %d) in one conversation, general or a learner's: it thinks %s to %s, then posts the exchange (2 turns with client ids), searches with include_archive after 1 reply in %d and reloads its conversation after 1 in %d; HTTP/1.1 keep-alive. The clients run in this process, beside the app",
		c.Clients, c.Duration, e.users, c.ThinkMin, c.ThinkMax, searchOneIn, getOneIn))
	if run.model != nil {
		header = append(header, fmt.Sprintf("Model: a fake OpenAI-compatible server in this process answers every chat completion after %s (summaries: generated text; extraction: no memories); the background worker runs",
			run.model.latency))
	} else {
		header = append(header, "Model: none (no OPENAI_API_KEY): offline summaries, written in the post's transaction; no extraction, no worker")
	}

	tableHeader := []string{"route", "requests", "errors", "req/s", "p50", "p90", "p99", "max"}
	var rows [][]string
	for _, r := range []*result{run.all, run.post, run.search, run.get} {
		rows = append(rows, []string{r.route.name, strconv.Itoa(r.count), strconv.Itoa(r.errors),
			fmt.Sprintf("%.1f", r.throughput()), ms(r.percentile(0.5)), ms(r.percentile(0.9)),
			ms(r.percentile(0.99)), ms(r.max())})
	}

	w, v := run.watch, run.checked
	peak := "VmHWM"
	if !w.hwmReset {
		peak += " since the process started"
	}
	notes := []string{
		fmt.Sprintf("Ran %.1f s: the clients stop starting exchanges at %s and finish the one in hand.", run.elapsed.Seconds(), c.Duration),
		fmt.Sprintf("Memory of this process, which is the app and the load generator together: peak RSS %s (%s); sampled every %s: RSS at most %s, Go heap in use at most %s.",
			mib(w.peakRSS), peak, sampleEvery, mib(w.maxRSS), mib(w.maxHeap)),
		"CPU, app+clients / Postgres / other: " + cpuColumn(run.cpu) + " of the machine" + busyMachine(run.cpu) + ".",
		fmt.Sprintf("The app's database sessions, sampled every %s (%d samples): at most %d idle in transaction (between a transaction's statements); the longest open transaction %s (limit %s with the model); app pool: at most %d of %d connections acquired (%d open), %d acquires found none idle (%s waiting in all).",
			sampleEvery, w.samples, w.maxIdleInTx, ms(w.longestTx), ms(maxTransaction), w.maxAcquired, w.poolMax, w.maxOpen,
			w.waited, w.waitTime.Round(time.Millisecond)),
	}
	if w.longestTx > maxTransaction {
		notes = append(notes, fmt.Sprintf("The longest transaction was %q.", w.longestWhat))
	}
	if w.maxOthers > 0 {
		notes = append(notes, fmt.Sprintf("Other sessions worked on this database meanwhile (at most %d at once, not the app's: another benchmark or a manual query); they took CPU and I/O from the run.",
			w.maxOthers))
	}
	if m := run.model; m != nil {
		j := run.jobs
		notes = append(notes, fmt.Sprintf("Model calls answered: %d summaries, %d extractions; at most %d in flight at once. Extraction jobs: %d queued, %d done, %d still queued at the end (%d extractions at a time, MEMORY_WORKERS), %d failed.",
			m.summaries.Load(), m.extractions.Load(), m.maxInFlight.Load(), j.queued, j.done, j.waiting, run.workers, j.failed))
	}
	notes = append(notes,
		fmt.Sprintf("Stored turns: %s acknowledged in %d conversations, %s of them in the log exactly once (%d missing, %d stored twice); the logs grew by %s turns; failed posts sent %d turns, %d of them stored.",
			thousands(int64(v.acked)), v.conversations, thousands(int64(v.storedOnce)), v.missing, v.twice,
			thousands(int64(v.grown)), v.unacked, v.unackedStored),
		fmt.Sprintf("Counts: archived %s + active %s = %s turns, the logs of those conversations hold %s.",
			thousands(int64(v.archived)), thousands(int64(v.active)), thousands(int64(v.archived+v.active)), thousands(int64(v.logTurns))),
	)
	notes = append(notes, resultNotes([]*result{run.post, run.search, run.get})...)
	if len(run.errors) > 0 {
		notes = append(notes, fmt.Sprintf("%d errors (target 0); the first: %s", run.all.errors, strings.Join(run.errors, "; ")))
	}
	verdict := "pass"
	if len(run.failures) > 0 {
		verdict = "FAIL: " + strings.Join(run.failures, "; ")
	}
	notes = append(notes, "Result: "+verdict)

	title := fmt.Sprintf("%d-client load run, %s mode, %s", c.Clients, run.mode, e.when.Format("2006-01-02 15:04 UTC"))
	r := resultsReport{header: header, tables: []table{{tableHeader, rows}}, notes: notes}
	if _, err := os.Stdout.WriteString(r.text(title)); err != nil {
		return err
	}
	// Appended, so both modes' figures stay side by side.
	md := "\n" + r.markdown(title)
	if err := os.MkdirAll(filepath.Dir(c.Out), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(c.Out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(md); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// busyMachine warns when other processes took a share of the CPU the
// figures depend on.
func busyMachine(u cpuUse) string {
	if !u.ok || u.others <= 0.05 {
		return ""
	}
	return "; other processes took CPU from the app and Postgres, so the latencies are pessimistic"
}

func mib(b uint64) string {
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
