package faults

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"mentormemory/app"
	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/postgres"
)

// poster posts new exchanges to one conversation, one after another, and
// remembers every attempt.
type poster struct {
	mu       sync.Mutex
	attempts []attempt
}

func (p *poster) run(t *testing.T, client apptest.Client, conv conversation, name string, stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		id := fmt.Sprintf("%s-x%d", name, n)
		x := newExchange(conv, id, "Question "+id+" about reading at bedtime", "Answer "+id+": try a shorter book")
		started := time.Now()
		a := postExchange(t, client, x)
		p.mu.Lock()
		p.attempts = append(p.attempts, attempt{x: x, started: started, settled: time.Now(), answer: a})
		p.mu.Unlock()
		// A client posts after each mentor reply, not in a tight loop; the
		// pause also leaves the two cores to the service and the database.
		time.Sleep(10 * time.Millisecond)
	}
}

// count is how many attempts so far match.
func (p *poster) count(match func(attempt) bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.attempts {
		if match(a) {
			n++
		}
	}
	return n
}

// TestDatabaseRestartAnswers503ThenRecovers restarts the database under a
// running service while facilitators keep posting. While the database is
// down every post is answered, within answerLimit, with a 503 JSON error
// and Retry-After; when it is back the same service, never restarted,
// stores posts again. Nothing acknowledged is lost or stored twice, and
// resending what was refused stores each turn once.
func TestDatabaseRestartAnswers503ThenRecovers(t *testing.T) {
	cluster := startPrivateCluster(t)
	ctx := context.Background()

	var serviceLog apptest.Logs
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("service log:\n%s", serviceLog.Tail())
		}
	})
	log := slog.New(slog.NewTextHandler(&serviceLog, &slog.HandlerOptions{Level: slog.LevelWarn}))
	service, err := app.New(ctx, config.Config{
		Database: config.Database{URL: cluster.url("postgres"), ArchiveTurns: 50},
		Auth:     config.Auth{JWTSecret: apptest.Secret},
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(service.Close)
	if _, err := postgres.Migrate(ctx, service.Pool); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	srv := httptest.NewServer(service.Handler)
	t.Cleanup(srv.Close)
	client := newClient(t, srv.URL)

	db := connect(t, cluster.url("postgres"))
	dana := apptest.NewUser(t, db)
	conversations := []conversation{{who: dana}, {who: dana, learnerID: apptest.NewLearner(t, db, dana, "Emma")}}

	posters := make([]*poster, len(conversations))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, conv := range conversations {
		posters[i] = &poster{}
		wg.Go(func() { posters[i].run(t, client, conv, fmt.Sprintf("p%d", i), stop) })
	}
	stopPosting := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopPosting)
	everyPoster := func(atLeast int, match func(attempt) bool) func() bool {
		return func() bool {
			for _, p := range posters {
				if p.count(match) < atLeast {
					return false
				}
			}
			return true
		}
	}

	waitFor(t, 10*time.Second, "the first acknowledged posts",
		everyPoster(3, func(a attempt) bool { return a.answer.acknowledged() }))

	cluster.stop(t)
	down := time.Now()
	waitFor(t, 10*time.Second, "posts answered while the database is down",
		everyPoster(5, func(a attempt) bool { return a.started.After(down) }))
	if status := healthStatus(t, client); status != http.StatusServiceUnavailable {
		t.Errorf("GET /healthz with the database down: %d, want 503", status)
	}

	restarting := time.Now()
	cluster.start(t)
	waitFor(t, 15*time.Second, "the service to store posts again after the database came back",
		everyPoster(1, func(a attempt) bool { return a.started.After(restarting) && a.answer.acknowledged() }))
	recovered := time.Since(restarting)
	stopPosting()

	var all []exchange
	var unacknowledged []attempt
	acknowledged, refusedWhileDown := 0, 0
	for _, p := range posters {
		for _, a := range p.attempts {
			all = append(all, a.x)
			whileDown := a.started.After(down) && a.settled.Before(restarting)
			switch {
			case a.answer.Err != nil:
				t.Errorf("post %s: %v (a request must get an answer within %v)", a.x.turns[0].ID, a.answer.Err, answerLimit)
			case a.answer.acknowledged() && whileDown:
				t.Errorf("post %s was acknowledged while the database was down: %s", a.x.turns[0].ID, a.answer)
			case a.answer.acknowledged():
				acknowledged++
			case a.answer.isRetryableError():
				if whileDown {
					refusedWhileDown++
				}
			default:
				t.Errorf("post %s answered %s, want a 2xx or a 503 JSON error with Retry-After", a.x.turns[0].ID, a.answer)
			}
			if !a.answer.acknowledged() {
				unacknowledged = append(unacknowledged, a)
			}
		}
	}
	t.Logf("%d posts: %d acknowledged, %d refused with 503 while the database was down; storing again %v after its restart began",
		len(all), acknowledged, refusedWhileDown, recovered.Round(time.Millisecond))

	db = connect(t, cluster.url("postgres"))
	for _, p := range posters {
		for _, a := range p.attempts {
			if !a.answer.acknowledged() {
				continue
			}
			if n := apptest.Count(t, db, `select count(*) from public.conversation_turns
				where facilitator_id = $1::uuid and client_turn_id = any($2::text[])`,
				dana.ID, []string{a.x.turns[0].ID, a.x.turns[1].ID}); n != len(a.x.turns) {
				t.Errorf("acknowledged exchange %s has %d of its %d turns stored", a.x.turns[0].ID, n, len(a.x.turns))
			}
		}
	}

	// The web client resends what was not acknowledged; the turn ids make
	// that harmless even for a post that was stored but whose answer was
	// lost.
	for _, a := range unacknowledged {
		resent := postExchange(t, client, a.x)
		if !resent.acknowledged() || (resent.TurnsAdded != 0 && resent.TurnsAdded != len(a.x.turns)) {
			t.Errorf("resending %s: %s", a.x.turns[0].ID, resent)
		}
	}
	checkStoredOnce(t, db, all)
}

// healthStatus is the status of GET /healthz.
func healthStatus(t *testing.T, client apptest.Client) int {
	t.Helper()
	res := client.Do(t, apptest.Request{Method: http.MethodGet, Path: "/healthz"})
	if res.Status == 0 {
		t.Fatalf("GET /healthz: %v", res.Err)
	}
	return res.Status
}
