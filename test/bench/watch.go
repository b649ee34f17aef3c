package bench

import (
	"context"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

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
	//
	// An idle session holds no transaction of the app's, whose transactions
	// begin with BEGIN and show as "active" or "idle in transaction" while
	// open; yet one was seen, once in a full test run on a starved machine,
	// idle after a commit with a start of transaction 1.8 s old ("idle:
	// Client ClientRead: commit"): a transaction the protocol opens for a
	// message outside one (a statement's Parse or Describe) and closes at
	// the client's Sync. Idle sessions are left out of the ages.
	var idle, others int
	var longest float64
	var what string
	err := admin.QueryRow(ctx, `select
			count(*) filter (where application_name = $1 and state = 'idle in transaction'),
			coalesce(extract(epoch from max(statement_timestamp() - xact_start)
				filter (where application_name = $1 and state is distinct from 'idle')), 0)::float8,
			coalesce((array_agg(concat_ws(': ', coalesce(state, 'starting'), wait_event_type || ' ' || wait_event,
				left(query, 300)) order by xact_start)
				filter (where application_name = $1 and xact_start is not null and state is distinct from 'idle'))[1], ''),
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
