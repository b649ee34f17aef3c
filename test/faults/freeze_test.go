package faults

import (
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/postgres/pgtest"
)

// freezingProxy forwards TCP connections to the database until frozen; then
// it holds every byte in both directions, as a frozen host or a network
// partition does: connections stay open and nothing answers.
type freezingProxy struct {
	addr   string
	target string

	mu     sync.Mutex
	frozen bool
	thawed *sync.Cond
}

func startFreezingProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{addr: listener.Addr().String(), target: target}
	p.thawed = sync.NewCond(&p.mu)
	var conns sync.WaitGroup
	var open []net.Conn
	var openMu sync.Mutex
	t.Cleanup(func() {
		listener.Close()
		p.setFrozen(false)
		openMu.Lock()
		for _, c := range open {
			c.Close()
		}
		openMu.Unlock()
		conns.Wait()
	})
	go func() {
		for {
			client, err := listener.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			openMu.Lock()
			open = append(open, client, server)
			openMu.Unlock()
			conns.Go(func() { p.pipe(server, client) })
			conns.Go(func() { p.pipe(client, server) })
		}
	}()
	return p
}

// pipe copies from src to dst, waiting while the proxy is frozen.
func (p *freezingProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.frozen {
				p.thawed.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				src.Close()
			}
			return
		}
	}
}

func (p *freezingProxy) setFrozen(frozen bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = frozen
	p.thawed.Broadcast()
}

// TestFrozenDatabaseAnswers503InsteadOfHanging freezes the network between
// the service and its database. Requests must not wait for it forever: each
// is answered with the retryable 503 once its transaction's time limit
// passes, and once the network is back the service stores posts again with
// nothing lost or stored twice.
func TestFrozenDatabaseAnswers503InsteadOfHanging(t *testing.T) {
	databaseURL := pgtest.NewDatabase(t)
	parsed, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startFreezingProxy(t, parsed.Host)
	parsed.Host = proxy.addr
	// The transaction limit is a second, so a frozen database answers
	// quickly.
	srv := apptest.Start(t, apptest.Options{
		DatabaseURL: parsed.String(), TxTimeout: time.Second,
	})
	client := newClient(t, srv.URL)

	db := connect(t, databaseURL)
	conv := conversation{who: apptest.NewUser(t, db)}
	conv.learnerID = apptest.NewLearner(t, db, conv.who, "Noah")
	var sent []exchange
	post := func(id string) answer {
		x := newExchange(conv, id, "Question "+id+" about spelling practice", "Answer "+id+": five words a day")
		sent = append(sent, x)
		return postExchange(t, client, x)
	}
	if a := post("before"); !a.acknowledged() {
		t.Fatalf("post before the freeze: %s", a)
	}

	proxy.setFrozen(true)
	for i := range 3 {
		// answerLimit (the client's timeout) is ten times the transaction
		// limit: a post still waiting then is hanging.
		if a := post("frozen-" + strconv.Itoa(i)); !a.isRetryableError() {
			t.Fatalf("post %d while the database is frozen: %s, want a 503 JSON error with Retry-After", i, a)
		}
	}
	if status := healthStatus(t, client); status != 503 {
		t.Errorf("GET /healthz while the database is frozen: %d, want 503", status)
	}

	proxy.setFrozen(false)
	waitFor(t, 15*time.Second, "the service to store posts again after the network came back", func() bool {
		return post("after-" + strconv.Itoa(len(sent))).acknowledged()
	})
	// Refused posts are resent, as the web client does; then every turn is
	// stored exactly once.
	for _, x := range sent {
		if a := postExchange(t, client, x); !a.acknowledged() {
			t.Fatalf("resending %s: %s", x.turns[0].ID, a)
		}
	}
	checkStoredOnce(t, db, sent)
}
