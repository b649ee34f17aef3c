package faults

import (
	"errors"
	"fmt"
	"maps"
	"mentormemory/app/apptest"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The server binary is built once for the package, into a directory removed
// when the tests end.
var serverBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if serverBuild.dir != "" {
		os.RemoveAll(serverBuild.dir)
	}
	os.Exit(code)
}

// serverBinary builds cmd/server as it is deployed, so the tests can run,
// kill and signal the real process.
func serverBinary(t *testing.T) string {
	t.Helper()
	serverBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "faults-server-")
		if err != nil {
			serverBuild.err = err
			return
		}
		serverBuild.dir = dir
		path := filepath.Join(dir, "server")
		build := exec.Command("go", "build", "-o", path, "./cmd/server")
		build.Dir = "../.." // the module root
		if out, err := build.CombinedOutput(); err != nil {
			serverBuild.err = fmt.Errorf("go build ./cmd/server: %v\n%s", err, out)
			return
		}
		serverBuild.path = path
	})
	if serverBuild.err != nil {
		t.Fatal(serverBuild.err)
	}
	return serverBuild.path
}

// serverProcess is the server binary running as a child process.
type serverProcess struct {
	cmd    *exec.Cmd
	addr   string // host:port
	url    string
	output *apptest.Logs
	exited chan struct{} // closed once the process is gone
}

// startServer runs the server binary on a port of its own (apptest.Port)
// with exactly env (and PORT), waits until it answers /healthz, and kills
// it when the test ends.
func startServer(t *testing.T, env map[string]string) *serverProcess {
	t.Helper()
	port := apptest.Port(t)
	cmd := exec.Command(serverBinary(t))
	// Only what the test sets: nothing from the developer's environment,
	// such as a real OPENAI_API_KEY, reaches the server.
	cmd.Env = []string{"PORT=" + strconv.Itoa(port)}
	for _, name := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, name+"="+env[name])
	}
	p := &serverProcess{
		cmd:    cmd,
		addr:   fmt.Sprintf("127.0.0.1:%d", port),
		output: &apptest.Logs{},
		exited: make(chan struct{}),
	}
	p.url = "http://" + p.addr
	cmd.Stdout, cmd.Stderr = p.output, p.output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		if p.running() {
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("output of the server on %s:\n%s", p.addr, p.output.Tail())
		}
	})

	client := &http.Client{Timeout: time.Second}
	waitFor(t, 20*time.Second, "the server to answer /healthz", func() bool {
		if !p.running() {
			t.Fatalf("the server exited at start (%v):\n%s", cmd.ProcessState, p.output.Tail())
		}
		resp, err := client.Get(p.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

func (p *serverProcess) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// waitRefusing waits until the server refuses new connections, as it does
// once a shutdown has begun.
func (p *serverProcess) waitRefusing(t *testing.T) {
	t.Helper()
	waitFor(t, 10*time.Second, "new connections to be refused after SIGTERM", func() bool {
		conn, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err == nil {
			conn.Close()
		}
		return errors.Is(err, syscall.ECONNREFUSED)
	})
}

// signal sends sig to the server.
func (p *serverProcess) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits (at most limit) for the server to exit and returns how it
// ended.
func (p *serverProcess) wait(t *testing.T, limit time.Duration) *os.ProcessState {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState
	case <-time.After(limit):
		t.Fatalf("the server is still running %v later", limit)
		return nil
	}
}
