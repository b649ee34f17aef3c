package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"mentormemory/app"
	"mentormemory/config"
)

// The per-route run measures what a request costs the server: its own CPU
// time and its Postgres backends'. In one process with the load generator,
// the two could not be told apart, so the run serves the app from a second
// process, this same binary under `bench serve`, and reads that process's
// CPU time from /proc. (The clients run keeps the app in its own process:
// it watches the app's pool from inside.)

// ServeConfig is what `bench serve` serves: the app built from this
// process's environment, as cmd/server builds it.
type ServeConfig struct {
	Addr       string // 127.0.0.1:port
	ServerLog  string
	CPUProfile string // a CPU profile of the server, written as it stops
}

// ServeCommand is `bench serve -addr 127.0.0.1:PORT -server-log FILE
// [-cpuprofile FILE]`, the server process of the per-route run; the app's
// settings come from the environment.
func ServeCommand(ctx context.Context, args []string, stdout io.Writer) error {
	var c ServeConfig
	flags := flag.NewFlagSet("bench serve", flag.ContinueOnError)
	flags.StringVar(&c.Addr, "addr", "", "loopback address to listen on")
	flags.StringVar(&c.ServerLog, "server-log", "", "the app's request log")
	flags.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the server to this file")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if c.Addr == "" || c.ServerLog == "" {
		return errors.New("bench serve: -addr and -server-log are required")
	}
	return Serve(ctx, c, stdout)
}

// serverInfo is the line `bench serve` prints once it listens: what the
// report says about the app.
type serverInfo struct {
	PoolMax    int32  `json:"pool_max"`
	ExecMode   string `json:"exec_mode"`
	Summarizer string `json:"summarizer"`
}

func describeApp(a *app.App) serverInfo {
	return serverInfo{
		PoolMax:    a.Pool.Config().MaxConns,
		ExecMode:   a.Pool.Config().ConnConfig.DefaultQueryExecMode.String(),
		Summarizer: a.Service.SummarizerName(),
	}
}

// Serve builds the app from the environment, migrates, listens on c.Addr,
// prints serverInfo as one line of JSON on stdout, and serves until ctx
// ends.
func Serve(ctx context.Context, c ServeConfig, stdout io.Writer) error {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	logFile, err := os.Create(c.ServerLog)
	if err != nil {
		return err
	}
	defer logFile.Close()
	a, err := newApp(ctx, cfg, slog.New(slog.NewJSONHandler(logFile, nil)))
	if err != nil {
		return err
	}
	defer a.Close()
	if err := parseSettledSummaries(ctx, a); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return err
	}
	srv := a.HTTPServer(c.Addr)
	go func() { _ = srv.Serve(ln) }()

	if c.CPUProfile != "" {
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
	if err := json.NewEncoder(stdout).Encode(describeApp(a)); err != nil {
		return err
	}
	<-ctx.Done()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// parseSettledSummaries parses for search the summaries settled since the
// last run, as the worker of a server running all along would have
// (cmd/server runs it beside the API). Without it every search would parse
// every summary its facilitator's posts of the last run changed. The worker itself does not
// run during the measurements: its other work (ending the sessions left
// idle, then consolidating their learners' memories, hundreds of
// milliseconds each) comes on its own schedule and would be counted
// against whichever route was being measured.
func parseSettledSummaries(ctx context.Context, a *app.App) error {
	if _, err := a.Worker.RefreshSummaryVectors(ctx); err != nil {
		return fmt.Errorf("parsing summaries for search: %w", err)
	}
	return nil
}

// serverProcess is the app served by `bench serve` in a process of its
// own, and a client for it.
type serverProcess struct {
	info   serverInfo
	base   string // http://127.0.0.1:port
	pid    int
	client *http.Client
	stop   func()
}

// startServerProcess runs `bench serve` (this binary; a test binary serves
// the same way, see TestMain) with env as its whole environment
// (besides PATH and the Go runtime's settings) and waits until it serves.
// The client keeps up to conns connections open.
func startServerProcess(ctx context.Context, env map[string]string, serverLog, cpuProfile string, conns int) (*serverProcess, error) {
	if err := os.MkdirAll(filepath.Dir(serverLog), 0o755); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "serve", "-addr", addr, "-server-log", serverLog, "-cpuprofile", cpuProfile)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for _, name := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG"} {
		if v := os.Getenv(name); v != "" {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	for name, v := range env {
		cmd.Env = append(cmd.Env, name+"="+v)
	}
	cmd.Stderr = os.Stderr
	// A benchmark that is killed takes its server with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	// The first line comes once it has migrated and listens; a server that
	// fails exits, which ends the line.
	var info serverInfo
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &info)
	}
	if err != nil {
		stop()
		return nil, fmt.Errorf("the benchmark's server did not start (see %s): %w", serverLog, err)
	}
	s := &serverProcess{info: info, base: "http://" + addr, pid: cmd.Process.Pid, client: benchClient(conns)}
	s.stop = func() {
		s.client.CloseIdleConnections()
		stop()
	}
	if err := healthy(ctx, s.client, s.base); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// freeLoopbackAddr is a port on 127.0.0.1 that nothing listens on now.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
