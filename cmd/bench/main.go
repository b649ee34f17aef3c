// Command bench is the memory service's speed benchmark: it loads a large,
// realistic data set straight into Postgres, then serves the real app on
// loopback and measures its routes' latency under concurrent load. The
// work is done by mentormemory/test/bench; this reads the flags.
//
//	bench load -db URL [-facilitators 1000] [-archives 100] [-turns 10] [-active-turns 10] [-workers 3]
//	           [-heavy 100,1000,10000] [-heavy-turns 50] [-heavy-learners 30]
//	           [-memories 500] [-memory-learners 1000]
//	bench run  -db URL [-concurrency 8] [-duration 20s] [-requests 5000] [-warmup 3s] [-out FILE]
//	           [-routes get,search,recall-light | -routes heavy | -routes search-10000] [-cpuprofile FILE]
//	bench clients -db URL [-clients 50] [-duration 60s] [-think-min 500ms] [-think-max 2s]
//	           [-modes offline,model] [-model-latency 1s] [-out FILE]
//	bench serve -addr 127.0.0.1:PORT -server-log FILE [-cpuprofile FILE]   (run's server process)
//	bench rss  -db URL -server BIN [-label NAME] [-duration 20s] [-settle 10s] [-header-conns 300]
//	           [-posters 150] [-stalled 200] [-loads headers,posts,stalled] [-out FILE]
//
// load skips what is loaded already, so a second run reuses the data, and
// adds the heavy tenants (one facilitator each, with that many archived
// conversations) not loaded yet without reloading the rest; run
// needs the data loaded, and so does clients, the load run of concurrent
// web clients. run serves the app from a process of its own, this binary
// under serve, so that the server's CPU time is told from the load
// generator's. rss needs no data: it runs a server binary on a database of
// its own and measures that process's memory. The learner memories (-memories per learner, 0 for none)
// are a data set of their own, loaded after the conversations.
// scripts/bench starts a private cluster and runs both. -db must connect as
// a superuser (or a role that bypasses RLS): the loader writes every
// facilitator's rows directly.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"mentormemory/test/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := command(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func command(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: bench load|run|clients|rss [flags] (bench load -h for the flags)")
	}
	name, args := args[0], args[1:]
	if name == "serve" {
		// The per-route run's server process: its settings come from the
		// environment run gives it.
		return bench.ServeCommand(ctx, args, os.Stdout)
	}
	flags := flag.NewFlagSet("bench "+name, flag.ContinueOnError)
	db := flags.String("db", os.Getenv("BENCH_DATABASE_URL"), "database URL, as a superuser (default $BENCH_DATABASE_URL)")
	parse := func() error {
		if err := flags.Parse(args); err != nil {
			return err
		}
		if *db == "" {
			return errors.New("-db or BENCH_DATABASE_URL is required")
		}
		return nil
	}
	switch name {
	case "load":
		c := bench.LoadConfig{}
		flags.IntVar(&c.Shape.Facilitators, "facilitators", 1000, "facilitators to load")
		flags.IntVar(&c.Shape.Archives, "archives", 100, "archived conversations per facilitator")
		flags.IntVar(&c.Shape.TurnsPerArchive, "turns", 10, "turns per archived conversation")
		flags.IntVar(&c.Shape.ActiveTurns, "active-turns", 10, "average active turns per live conversation (general and each learner)")
		flags.Uint64Var(&c.Shape.Seed, "seed", 1, "seed of the generated data")
		flags.IntVar(&c.Workers, "workers", 3, "concurrent loading connections")
		flags.IntVar(&c.Batch, "batch", 20, "facilitators per batch (one transaction each)")
		heavy := flags.String("heavy", "", "heavy tenants to load beside the data set, by their archived conversations: comma-separated, e.g. 100,1000,10000")
		flags.IntVar(&c.Heavy.TurnsPerArchive, "heavy-turns", 50, "turns per archived conversation of the heavy tenants")
		flags.IntVar(&c.Heavy.Learners, "heavy-learners", 30, "learners of each heavy tenant")
		flags.IntVar(&c.Memories.PerLearner, "memories", 500, "learner memories per learner (0: no memory data)")
		flags.IntVar(&c.Memories.Learners, "memory-learners", 1000, "learners with memories: the first learner of each of the first N facilitators")
		if err := parse(); err != nil {
			return err
		}
		c.DatabaseURL = *db
		for _, n := range strings.Split(*heavy, ",") {
			if n = strings.TrimSpace(n); n == "" {
				continue
			}
			archives, err := strconv.Atoi(n)
			if err != nil {
				return fmt.Errorf("-heavy: %q is not a number of archived conversations", n)
			}
			c.Heavy.Archives = append(c.Heavy.Archives, archives)
		}
		return bench.Load(ctx, c)
	case "run":
		c := bench.RunConfig{}
		flags.IntVar(&c.Concurrency, "concurrency", 8, "requests in flight at once")
		flags.DurationVar(&c.Duration, "duration", bench.DefaultDuration, "measuring time per route, at most")
		// Enough that the fast routes measure for seconds too: their p99 over
		// a second or two moved by a third from run to run.
		flags.IntVar(&c.Requests, "requests", 50000, "measured requests per route, at most")
		flags.DurationVar(&c.Warmup, "warmup", bench.DefaultWarmup, "warm-up time per route, at most (not measured)")
		flags.IntVar(&c.WarmupRequests, "warmup-requests", 500, "warm-up requests per route, at most")
		flags.IntVar(&c.Archiving, "archiving", 1000, "conversations primed for the archiving POST route (0 skips that route)")
		flags.StringVar(&c.Out, "out", ".data/bench-results.md", "Markdown results file")
		flags.StringVar(&c.ServerLog, "server-log", ".data/bench-server.log", "the app's request log")
		flags.Uint64Var(&c.Seed, "seed", 1, "seed of the request mix")
		flags.StringVar(&c.Routes, "routes", "", "measure only these routes: comma-separated "+strings.Join(bench.RouteKeys, ", ")+
			"; heavy, or search-N and get-N, for the heavy tenants (measured only when named)")
		flags.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the server process (the app alone) to this file")
		if err := parse(); err != nil {
			return err
		}
		c.DatabaseURL = *db
		return bench.Run(ctx, c, os.Stdout)
	case "clients":
		c := bench.ClientsConfig{}
		flags.IntVar(&c.Clients, "clients", 50, "concurrent web clients, each a different facilitator")
		flags.DurationVar(&c.Duration, "duration", time.Minute, "how long each mode runs")
		flags.DurationVar(&c.ThinkMin, "think-min", 500*time.Millisecond, "a client's shortest think time before the next exchange")
		flags.DurationVar(&c.ThinkMax, "think-max", 2*time.Second, "a client's longest think time")
		flags.StringVar(&c.Modes, "modes", bench.OfflineMode+","+bench.ModelMode,
			"modes to run, in this order: offline (no model key), model (a fake model that answers after -model-latency)")
		flags.DurationVar(&c.ModelLatency, "model-latency", time.Second, "how long the fake model takes to answer")
		flags.StringVar(&c.Out, "out", ".data/bench-results.md", "Markdown results file, appended to")
		flags.StringVar(&c.ServerLog, "server-log", ".data/bench-clients-server.log", "the app's request log; each mode's name is added to it")
		flags.Uint64Var(&c.Seed, "seed", 1, "seed of the clients' choices and texts")
		if err := parse(); err != nil {
			return err
		}
		c.DatabaseURL = *db
		return bench.RunClients(ctx, c, os.Stdout)
	case "rss":
		c := bench.RSSConfig{}
		flags.StringVar(&c.Server, "server", "", "the server binary to measure (go build ./cmd/server)")
		flags.StringVar(&c.Label, "label", "this tree", "what the report calls the server, e.g. its revision")
		flags.DurationVar(&c.Duration, "duration", 20*time.Second, "how long each load runs")
		flags.DurationVar(&c.Settle, "settle", 10*time.Second, "how long after a load the server's memory is read again")
		flags.IntVar(&c.HeaderConns, "header-conns", 300, "connections sending a 1 MiB header line")
		flags.IntVar(&c.Posters, "posters", 150, "facilitators posting a 2 MB conversation at once")
		flags.IntVar(&c.Stalled, "stalled", 200, "connections stalling a 2 MiB body one byte short")
		flags.StringVar(&c.Loads, "loads", "headers,posts,stalled", "loads to run, in this order: headers, posts, stalled")
		flags.StringVar(&c.Out, "out", ".data/bench-rss.md", "Markdown results file, appended to")
		flags.StringVar(&c.ServerLog, "server-log", ".data/bench-rss-server.log", "the server's log")
		if err := parse(); err != nil {
			return err
		}
		c.DatabaseURL = *db
		return bench.RunRSS(ctx, c, os.Stdout)
	default:
		return fmt.Errorf("unknown command %q (want load, run, clients or rss)", name)
	}
}
