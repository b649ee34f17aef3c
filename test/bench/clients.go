package bench

// The 50-client load run: web clients as people use them, each a
// facilitator talking with the mentor about one learner (or in general),
// against the real app, with the offline summarizer and then with a slow
// model. Where the per-route run asks how fast each route is, this one asks
// whether the service stays correct and lean under a realistic mix: every
// acknowledged turn stored once, every conversation's counts balanced, no
// database connection or row lock held while the model thinks.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/postgres"
	"mentormemory/test/textgen"
)

const (
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

// RunClients runs the clients in each mode of c, one mode after the other,
// and reports each as it ends: on stdout, and appended to c.Out as
// Markdown. A mode that breaks an invariant fails the run.
func RunClients(ctx context.Context, c ClientsConfig, stdout io.Writer) error {
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
		if err := run.report(stdout, c); err != nil {
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

func runClientMode(ctx context.Context, admin *pgxpool.Pool, fs []*facilitator, c ClientsConfig, mode string, index uint64, localDB bool) (*clientRun, error) {
	logf("%s mode: %d clients for %s", mode, c.Clients, c.Duration)
	if err := vacuumDatabase(ctx, admin); err != nil {
		return nil, err
	}
	run := &clientRun{mode: mode}
	var modelEnv map[string]string
	if mode == ModelMode {
		run.model = newFakeModel(c.ModelLatency, c.Seed)
		defer run.model.close()
		modelEnv = map[string]string{"OPENAI_API_KEY": "bench-fake-key", "OPENAI_BASE_URL": run.model.url()}
		if err := dropQueuedJobs(ctx, admin); err != nil {
			return nil, err
		}
	}
	cfg, _, err := benchConfig(withApplicationName(c.DatabaseURL, appName), modelEnv)
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
	if run.env, err = describe(ctx, admin, "in this process, with its clients", describeApp(a), cfg, c.DatabaseURL, len(fs)); err != nil {
		return nil, err
	}

	// With a model the worker runs beside the server, as in cmd/server, and
	// extracts memories from every exchange. Without one it is left out, so
	// that the figures are the requests' own: its sweeps end sessions and
	// consolidate their learners' memories on their own schedule.
	stopWorker := func() {}
	if mode == ModelMode {
		stopWorker = a.StartWorker(ctx)
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

	cpuBefore := sampleCPU(ctx, admin, localDB, 0)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan *watch)
	go func() { watched <- watchLoad(watchCtx, admin, a.Pool) }()
	run.load(ctx, served, c, index)
	stopWatch()
	run.watch = <-watched
	run.cpu = cpuBetween(cpuBefore, sampleCPU(ctx, admin, localDB, 0))
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
func (run *clientRun) load(ctx context.Context, served *servedApp, c ClientsConfig, index uint64) {
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
					req, err := searchArchive(served.base, sc.f.token, textgen.Pick(r, searchQueries))
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

func (run *clientRun) report(stdout io.Writer, c ClientsConfig) error {
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
	if _, err := io.WriteString(stdout, r.text(title)); err != nil {
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
