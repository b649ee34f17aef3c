package bench

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The machine is shared: anything else running (a test suite, a build)
// takes CPU from the app and Postgres and inflates the latencies. So each
// route's CPU time is split into this process (the load generator, and the
// app when it runs in this process), the server process when it has one of
// its own, the database's processes and everything else, and the report
// shows the share of the rest. Linux only; elsewhere, or with a remote
// database, the figures are left out.

// cpuSample is a reading of the CPU time counters, in clock ticks.
type cpuSample struct {
	ok       bool
	total    uint64 // all CPUs, idle included
	busy     uint64 // all CPUs, not idle
	self     uint64
	server   uint64 // the server process, when it is not this one
	postgres map[int]uint64
}

// cpuUse is the share of the machine's CPU time over an interval.
type cpuUse struct {
	ok                                   bool
	busy, self, server, postgres, others float64 // fractions of all CPUs' time
	seconds                              float64 // all CPUs' time, idle included
}

// sampleCPU reads the counters: the machine's, this process's, the server
// process's (serverPID, 0 when the app runs in this process) and, when the
// database is on this machine, its processes'.
func sampleCPU(ctx context.Context, admin *pgxpool.Pool, localDB bool, serverPID int) cpuSample {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuSample{}
	}
	s, ok := parseCPUTimes(string(stat))
	if !ok {
		return cpuSample{}
	}
	s.self, _ = processTicks("self")
	if serverPID != 0 {
		if s.server, ok = processTicks(strconv.Itoa(serverPID)); !ok {
			return cpuSample{}
		}
	}
	s.postgres = map[int]uint64{}
	if localDB {
		// Backends of this database and the cluster's background processes
		// (WAL writer, checkpointer, autovacuum).
		rows, err := admin.Query(ctx, `select pid from pg_stat_activity
			where datname = current_database() or datname is null`)
		if err == nil {
			var pid int
			_, _ = pgx.ForEachRow(rows, []any{&pid}, func() error {
				if t, ok := processTicks(strconv.Itoa(pid)); ok {
					s.postgres[pid] = t
				}
				return nil
			})
		}
	}
	s.ok = true
	return s
}

// parseCPUTimes reads the machine's time, all of it and the busy part,
// from the first line of /proc/stat.
func parseCPUTimes(stat string) (cpuSample, bool) {
	var s cpuSample
	line, _, _ := strings.Cut(stat, "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return s, false
	}
	// user nice system idle iowait irq softirq; steal and guest time, which
	// follow, are left out (guest time is counted in user already).
	for i, f := range fields[1:8] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return s, false
		}
		s.total += v
		if i != 3 && i != 4 { // idle, iowait
			s.busy += v
		}
	}
	return s, true
}

// processTicks reads a process's CPU time, utime+stime of /proc/<pid>/stat.
func processTicks(pid string) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	return parseProcessTicks(string(b))
}

func parseProcessTicks(stat string) (uint64, bool) {
	// The command name, in parentheses, may hold spaces and parentheses:
	// count the fields after its last closing one.
	i := strings.LastIndex(stat, ") ")
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+2:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return utime + stime, true
}

// ticksPerSecond is the kernel's USER_HZ, the unit of /proc's CPU times:
// 100 on every Linux this runs on.
const ticksPerSecond = 100

func cpuBetween(a, b cpuSample) cpuUse {
	// Counters tick 100 times a second per CPU: under a second of
	// measuring, rounding alone would be several percent.
	if !a.ok || !b.ok || b.total < a.total+uint64(ticksPerSecond*runtime.NumCPU()) {
		return cpuUse{}
	}
	total := float64(b.total - a.total)
	var pg uint64
	for pid, t := range b.postgres {
		pg += t - min(t, a.postgres[pid]) // a process started meanwhile counts from 0
	}
	u := cpuUse{
		ok:       true,
		busy:     float64(b.busy-a.busy) / total,
		self:     float64(b.self-a.self) / total,
		server:   float64(b.server-a.server) / total,
		postgres: float64(pg) / total,
		seconds:  total / ticksPerSecond,
	}
	u.others = max(0, u.busy-u.self-u.server-u.postgres)
	return u
}

// databaseIsLocal says whether Postgres runs on this machine, so that its
// processes' CPU time can be read.
func databaseIsLocal(ctx context.Context, admin *pgxpool.Pool) (bool, error) {
	var local bool
	err := admin.QueryRow(ctx, `select coalesce(host(inet_server_addr()) in ('127.0.0.1', '::1'), true)`).Scan(&local)
	return local, err
}
