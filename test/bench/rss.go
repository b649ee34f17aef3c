package bench

// The memory run: the server binary in a process of its own, as it is
// deployed, and the peak of its resident memory under loads aimed at
// memory rather than speed: connections that send a header line of about
// 1 MB, signed-in posts of 2 MB at once, and bodies stalled just short of
// the length they announced. The other runs serve the app inside the
// benchmark's process, whose memory is the load generator's too; this one
// reads the server's own, so the figures of two revisions' servers
// compare.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"mentormemory/auth"
	"mentormemory/handlers"
	"mentormemory/mentor"
)

// RSSConfig is what `bench rss` runs, and how.
type RSSConfig struct {
	DatabaseURL string        // a superuser's; the run creates a database of its own beside it
	Server      string        // the server binary (go build ./cmd/server)
	Label       string        // names the server in the report, e.g. its revision
	Duration    time.Duration // each load's length
	Settle      time.Duration // the wait after a load before its memory is read again
	HeaderConns int
	Posters     int
	Stalled     int
	Loads       string // comma-separated: headers, posts, stalled
	Out         string
	ServerLog   string
}

func (c RSSConfig) validate() error {
	switch {
	case c.Server == "":
		return fmt.Errorf("-server is required: a binary built from ./cmd/server")
	case c.Duration <= 0 || c.Settle < 0:
		return fmt.Errorf("-duration must be positive and -settle not negative")
	case c.HeaderConns < 1 || c.Posters < 1 || c.Stalled < 1:
		return fmt.Errorf("-header-conns, -posters and -stalled must be positive")
	}
	for _, l := range strings.Split(c.Loads, ",") {
		if !slices.Contains(rssLoads, l) {
			return fmt.Errorf("-loads: unknown load %q (want some of %s)", l, strings.Join(rssLoads, ", "))
		}
	}
	return nil
}

// rssLoads are the loads of the memory run, in the order they run.
var rssLoads = []string{"headers", "posts", "stalled"}

// rssLoad is one load of the memory run: what it does, and doing it to
// srv until ctx ends.
type rssLoad struct {
	name, what string
	run        func(ctx context.Context, srv *server, t *tally)
}

// headerLineBytes is the size of the header line each header connection
// sends: far over the server's limit, as a client that sends whatever it
// likes would.
const headerLineBytes = 1 << 20

// RunRSS runs each load in turn against a server started for it, on a
// fresh database, so that no load's memory is left to the next one, and
// reports the server's memory under each.
func RunRSS(ctx context.Context, c RSSConfig, stdout io.Writer) error {
	if err := c.validate(); err != nil {
		return err
	}
	if err := os.Remove(c.ServerLog); err != nil && !os.IsNotExist(err) {
		return err
	}
	dbURL, drop, err := freshDatabase(ctx, c.DatabaseURL)
	if err != nil {
		return err
	}
	defer drop()
	// The first start migrates the database, for the facilitators to sign
	// up in.
	srv, err := startServer(ctx, c, dbURL)
	if err != nil {
		return err
	}
	srv.stop()
	tokens, err := signUp(ctx, dbURL, c.Posters)
	if err != nil {
		return err
	}

	body, err := postBody()
	if err != nil {
		return err
	}
	loads := []rssLoad{
		{"headers", fmt.Sprintf("%d connections, each sending GET /healthz with a %d KiB header line, then again once answered",
			c.HeaderConns, headerLineBytes>>10),
			func(ctx context.Context, srv *server, t *tally) { srv.sendHeaders(ctx, c.HeaderConns, t) }},
		{"posts", fmt.Sprintf("%d facilitators, each posting the same %.1f MB conversation (100 turns of 20,000 characters, with ids: stored once, then resent) as soon as the last post is answered",
			c.Posters, float64(len(body))/1e6),
			func(ctx context.Context, srv *server, t *tally) { srv.post(ctx, tokens, body, t) }},
		{"stalled", fmt.Sprintf("%d connections, each a facilitator's post announcing %d bytes and sending one byte less, then waiting; again once answered",
			c.Stalled, handlers.MaxBodyBytes),
			func(ctx context.Context, srv *server, t *tally) { srv.stall(ctx, c.Stalled, tokens, t) }},
	}
	loads = slices.DeleteFunc(loads, func(l rssLoad) bool { return !slices.Contains(strings.Split(c.Loads, ","), l.name) })
	var rows [][]string
	for _, l := range loads {
		fmt.Fprintf(stdout, "%s: %s, for %s\n", l.name, l.what, c.Duration)
		srv, err := startServer(ctx, c, dbURL)
		if err != nil {
			return err
		}
		m, err := srv.measure(ctx, c, func(ctx context.Context, t *tally) { l.run(ctx, srv, t) })
		srv.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		rows = append(rows, []string{l.name, m.answers, mib(m.started), mib(m.peak), mib(m.end), mib(m.settled)})
	}

	header := []string{
		fmt.Sprintf("Server: %s (%s), its own process, on a fresh database; GOGC=%s GOMEMLIMIT=%s in its environment",
			c.Label, c.Server, envOr("GOGC", "unset"), envOr("GOMEMLIMIT", "unset")),
		fmt.Sprintf("Machine: %d CPUs, %s; the load generator, the server and Postgres share it", runtime.NumCPU(), procField("/proc/meminfo", "MemTotal")),
		fmt.Sprintf("Each load runs %s against a server started for it; the peak is the server's VmHWM; RSS is read before the load, as it ends and %s later",
			c.Duration, c.Settle),
	}
	var notes []string
	for _, l := range loads {
		notes = append(notes, l.name+": "+l.what+".")
	}
	title := fmt.Sprintf("Server memory, %s, %s", c.Label, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	r := resultsReport{header: header, notes: notes, tables: []table{{
		[]string{"load", "answers", "RSS before", "peak RSS", "RSS at the end", fmt.Sprintf("RSS %s later", c.Settle)}, rows}}}
	if _, err := io.WriteString(stdout, r.text(title)); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.Out), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(c.Out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.WriteString(f, "\n"+r.markdown(title))
	return err
}

func envOr(name, unset string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return unset
}

// freshDatabase creates an empty database beside the one adminURL names
// and returns its URL and what drops it.
func freshDatabase(ctx context.Context, adminURL string) (string, func(), error) {
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close(ctx)
	name := "mentor_rss_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	if _, err := admin.Exec(ctx, "create database "+name); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("-db must be a postgres:// URL: %w", err)
	}
	u.Path = "/" + name
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if admin, err := pgx.Connect(ctx, adminURL); err == nil {
			_, _ = admin.Exec(ctx, "drop database if exists "+name+" with (force)")
			admin.Close(ctx)
		}
	}
	return u.String(), drop, nil
}

// signUp adds n facilitators as Supabase Auth would and returns a token
// for each.
func signUp(ctx context.Context, dbURL string, n int) ([]string, error) {
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer db.Close(ctx)
	tokens := make([]string, n)
	for i := range tokens {
		id := uuid.NewString()
		if _, err := db.Exec(ctx, `insert into auth.users (id, aud, role, email, created_at, updated_at)
			values ($1::uuid, 'authenticated', 'authenticated', $2, now(), now())`, id, "rss-"+id+benchEmailDomain); err != nil {
			return nil, err
		}
		if tokens[i], err = auth.MintHS256(benchSecret, id, "", 2*time.Hour); err != nil {
			return nil, err
		}
	}
	return tokens, nil
}

// postBody is a conversation of 100 turns of 20,000 characters each, with
// client ids, written as the benchmark's data is.
func postBody() ([]byte, error) {
	g := &textGen{r: rand.New(rand.NewPCG(7, 7))}
	t := g.newTopic()
	turns := make([]mentor.Turn, 100)
	for i := range turns {
		role := []string{mentor.RoleUser, mentor.RoleAssistant}[i%2]
		var b strings.Builder
		for b.Len() < mentor.MaxTurnChars {
			b.WriteString(g.turn(role, t, "Emma", 9) + " ")
		}
		content := b.String()
		for utf8.RuneCountInString(content) > mentor.MaxTurnChars {
			content = content[:len(content)-1]
		}
		turns[i] = mentor.Turn{ID: "rss-" + strconv.Itoa(i), Role: role, Content: strings.TrimSpace(content)}
	}
	return json.Marshal(map[string]any{"learner_id": nil, "conversation_turns": turns})
}

// server is the server process under measurement.
type server struct {
	cmd  *exec.Cmd
	addr string // 127.0.0.1:port
	log  *os.File
}

// startServer runs c.Server on dbURL on a free loopback port, with the
// benchmark's token secret, and waits until it answers /healthz (it
// migrates first).
func startServer(ctx context.Context, c RSSConfig, dbURL string) (*server, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	if err := os.MkdirAll(filepath.Dir(c.ServerLog), 0o755); err != nil {
		return nil, err
	}
	// Appended: the run starts a server for each load.
	log, err := os.OpenFile(c.ServerLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.Server)
	// Dev mode makes it listen on 127.0.0.1 only, as a benchmark should.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "DATABASE_URL=" + dbURL, "SUPABASE_JWT_SECRET=" + benchSecret,
		"PORT=" + port, "MENTOR_DEV_MODE=true"}
	for _, name := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG"} {
		if v := os.Getenv(name); v != "" {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	s := &server{cmd: cmd, addr: "127.0.0.1:" + port, log: log}
	client := &http.Client{Timeout: 2 * time.Second}
	for range 600 {
		if healthy(ctx, client, "http://"+s.addr) == nil {
			return s, nil
		}
		if !sleep(ctx, 100*time.Millisecond) {
			break
		}
	}
	s.stop()
	return nil, fmt.Errorf("the server did not answer /healthz within a minute; see %s", c.ServerLog)
}

// stop ends the server as a platform would: SIGTERM, then SIGKILL after
// its grace period.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		_ = s.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(45 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.log.Close()
}

// rss and peak are the server's resident memory now and at its highest
// since resetPeak, in bytes.
func (s *server) rss() uint64  { return s.status("VmRSS") }
func (s *server) peak() uint64 { return s.status("VmHWM") }

func (s *server) status(field string) uint64 {
	kb, _ := strconv.ParseUint(strings.TrimSuffix(procField(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid), field), " kB"), 10, 64)
	return kb << 10
}

// resetPeak makes the peak start again from the current RSS (Linux 4.0
// and later).
func (s *server) resetPeak() error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.cmd.Process.Pid), []byte("5"), 0)
}

// measured is one load's memory and answers.
type measured struct {
	answers                     string
	started, peak, end, settled uint64
}

func (s *server) measure(ctx context.Context, c RSSConfig, load func(context.Context, *tally)) (measured, error) {
	if err := s.resetPeak(); err != nil {
		return measured{}, fmt.Errorf("resetting the server's peak RSS: %w", err)
	}
	t := &tally{counts: map[string]int{}}
	started := s.rss()
	loadCtx, cancel := context.WithTimeout(ctx, c.Duration)
	load(loadCtx, t)
	cancel()
	m := measured{answers: t.String(), started: started, peak: s.peak(), end: s.rss()}
	if !sleep(ctx, c.Settle) {
		return m, ctx.Err()
	}
	m.settled = s.rss()
	return m, nil
}

// tally counts the outcomes of a load's requests.
type tally struct {
	mu     sync.Mutex
	counts map[string]int
}

func (t *tally) add(outcome string) {
	t.mu.Lock()
	t.counts[outcome]++
	t.mu.Unlock()
}

func (t *tally) String() string {
	var parts []string
	for outcome, n := range t.counts {
		parts = append(parts, fmt.Sprintf("%s %s", thousands(int64(n)), outcome))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// The outcomes of requests cut off by the load's end.
const (
	unanswered      = "no answer before the load ended"
	stillConnecting = "still connecting when the load ended"
)

// statusOf names the answer read from conn, or why there was none.
func statusOf(conn net.Conn) string {
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return unanswered
		}
		return "closed without an answer"
	}
	resp.Body.Close()
	return strconv.Itoa(resp.StatusCode)
}

// reason is the system's word for a failure, when it has one.
func reason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// everyConn runs n connections, each sending what request(i) returns on a
// new connection and reading the answer, again and again until ctx ends.
// The request is sent while the answer is read: the server may answer
// before it has read it all, and close.
func (s *server) everyConn(ctx context.Context, n int, t *tally, request func(i int) net.Buffers) {
	end, _ := ctx.Deadline()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var d net.Dialer
			for ctx.Err() == nil {
				conn, err := d.DialContext(ctx, "tcp", s.addr)
				switch {
				case err != nil && time.Now().Before(end):
					t.add("could not connect (" + reason(err) + ")")
					sleep(ctx, 10*time.Millisecond)
					continue
				case err != nil:
					t.add(stillConnecting)
					return
				}
				_ = conn.SetDeadline(end)
				go func() {
					parts := request(i)
					_, _ = parts.WriteTo(conn)
				}()
				outcome := statusOf(conn)
				conn.Close()
				if ctx.Err() == nil || outcome == unanswered {
					t.add(outcome)
				}
			}
		})
	}
	wg.Wait()
}

func (s *server) sendHeaders(ctx context.Context, n int, t *tally) {
	request := []byte("GET /healthz HTTP/1.1\r\nHost: bench\r\nX-Padding: " + strings.Repeat("a", headerLineBytes) + "\r\n\r\n")
	s.everyConn(ctx, n, t, func(int) net.Buffers { return net.Buffers{request} })
}

func (s *server) stall(ctx context.Context, n int, tokens []string, t *tally) {
	body := bytes.Repeat([]byte(" "), handlers.MaxBodyBytes-1)
	copy(body, `{"conversation_turns": [`)
	s.everyConn(ctx, n, t, func(i int) net.Buffers {
		head := "POST /api/conversation-memory HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " + tokens[i%len(tokens)] +
			"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(handlers.MaxBodyBytes) + "\r\n\r\n"
		return net.Buffers{[]byte(head), body}
	})
}

func (s *server) post(ctx context.Context, tokens []string, body []byte, t *tally) {
	client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: len(tokens), DisableCompression: true}}
	defer client.CloseIdleConnections()
	target := &url.URL{Scheme: "http", Host: s.addr, Path: "/api/conversation-memory"}
	var wg sync.WaitGroup
	for _, token := range tokens {
		wg.Go(func() {
			for ctx.Err() == nil {
				req := (&http.Request{Method: http.MethodPost, URL: target, Header: http.Header{}}).WithContext(ctx)
				req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				switch {
				case err != nil && ctx.Err() != nil:
					t.add(unanswered)
				case err != nil:
					t.add("no answer")
				default:
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					t.add(strconv.Itoa(resp.StatusCode))
				}
			}
		})
	}
	wg.Wait()
}
