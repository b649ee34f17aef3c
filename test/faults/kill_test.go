package faults

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/postgres/pgtest"
)

// TestKilledServerLosesNoAcknowledgedTurn kills the server (SIGKILL: no
// chance to clean up) while facilitators post a burst of exchanges. After a
// restart every acknowledged turn is stored; resending every exchange, as
// the web client does after an error, then stores each turn exactly once,
// and the active and archived turn counts add up.
func TestKilledServerLosesNoAcknowledgedTurn(t *testing.T) {
	databaseURL := pgtest.NewDatabase(t)
	db := connect(t, databaseURL)
	env := map[string]string{
		"DATABASE_URL":        databaseURL,
		"SUPABASE_JWT_SECRET": apptest.Secret,
		// Small segments, so the burst archives some while it runs.
		"MEMORY_ARCHIVE_TURNS": "10",
	}

	// Registered before the server, so it runs after the server is killed,
	// which ends every sender.
	var senders sync.WaitGroup
	t.Cleanup(senders.Wait)
	server := startServer(t, env)

	dana, omar := apptest.NewUser(t, db), apptest.NewUser(t, db)
	conversations := []conversation{
		{who: dana},
		{who: dana, learnerID: apptest.NewLearner(t, db, dana, "Emma")},
		{who: omar, learnerID: apptest.NewLearner(t, db, omar, "Leo")},
	}

	// Two senders per conversation, so they also contend for its lock.
	const sendersPerConversation = 2
	var (
		mu           sync.Mutex
		attempts     []attempt
		acknowledged atomic.Int64
	)
	client := newClient(t, server.url)
	for i := range len(conversations) * sendersPerConversation {
		conv := conversations[i%len(conversations)]
		senders.Go(func() {
			// Each sender posts until the server is gone: its last post gets
			// no answer.
			for n := 0; ; n++ {
				id := fmt.Sprintf("s%d-x%d", i, n)
				x := newExchange(conv, id, "Question "+id+" about spelling tests", "Answer "+id+": practise five words a day")
				started := time.Now()
				a := postExchange(t, client, x)
				mu.Lock()
				attempts = append(attempts, attempt{x: x, started: started, settled: time.Now(), answer: a})
				mu.Unlock()
				if a.acknowledged() {
					acknowledged.Add(1)
				}
				if a.Err != nil {
					return
				}
			}
		})
	}

	waitFor(t, 20*time.Second, "a burst of acknowledged posts", func() bool { return acknowledged.Load() >= 40 })
	killed := time.Now()
	server.signal(t, syscall.SIGKILL)
	if state := server.wait(t, 10*time.Second); state.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the server ended with %v, not killed", state)
	}
	senders.Wait()

	var all []exchange
	acked, inFlight := 0, 0
	for _, a := range attempts {
		all = append(all, a.x)
		switch {
		case a.answer.acknowledged():
			acked++
		case a.answer.Err != nil && a.settled.Before(killed):
			t.Errorf("post %s got no answer before the kill: %v", a.x.turns[0].ID, a.answer.Err)
		case a.answer.Err != nil:
			if a.started.Before(killed) {
				inFlight++
			}
		case a.answer.Status != http.StatusServiceUnavailable:
			t.Errorf("post %s before the kill answered %s", a.x.turns[0].ID, a.answer)
		}
	}
	t.Logf("%d exchanges posted, %d acknowledged, %d in flight when the server was killed", len(all), acked, inFlight)

	server = startServer(t, env)
	for _, a := range attempts {
		if !a.answer.acknowledged() {
			continue
		}
		if n := apptest.Count(t, db, `select count(*) from public.conversation_turns
			where facilitator_id = $1::uuid and client_turn_id = any($2::text[])`,
			a.x.conv.who.ID, []string{a.x.turns[0].ID, a.x.turns[1].ID}); n != len(a.x.turns) {
			t.Errorf("acknowledged exchange %s has %d of its %d turns stored after the kill", a.x.turns[0].ID, n, len(a.x.turns))
		}
	}

	// The client resends everything it posted, acknowledged or not.
	client = newClient(t, server.url)
	for _, a := range attempts {
		resent := postExchange(t, client, a.x)
		switch {
		case !resent.acknowledged():
			t.Errorf("resending %s: %s", a.x.turns[0].ID, resent)
		case a.answer.acknowledged() && resent.TurnsAdded != 0:
			t.Errorf("resending acknowledged %s stored %d turns again", a.x.turns[0].ID, resent.TurnsAdded)
		case resent.TurnsAdded != 0 && resent.TurnsAdded != len(a.x.turns):
			t.Errorf("resending %s stored %d of its %d turns", a.x.turns[0].ID, resent.TurnsAdded, len(a.x.turns))
		}
	}
	checkStoredOnce(t, db, all)
}
