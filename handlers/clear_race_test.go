package handlers_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/memory"
)

// TestClearRacingPostsLosesNoTurn clears a conversation again and again
// while exchanges are posted to it. Every acknowledged turn must end up
// exactly once in the log, either in the active segment or in one archived
// segment, never in both and never in neither, and the counts must agree.
func TestClearRacingPostsLosesNoTurn(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{ArchiveTurns: 6})
	u := svc.NewUser(t)
	emma := svc.NewLearner(t, u, "Emma")

	const posters, exchanges = 4, 12
	var acknowledged sync.Map
	var wg sync.WaitGroup
	stop := make(chan struct{})
	clearerDone := make(chan struct{})
	clears := 0
	go func() {
		defer close(clearerDone)
		for {
			select {
			case <-stop:
				return
			default:
				if res := svc.Call(t, u.Token, http.MethodDelete, "/api/conversation-memory?learner_id="+emma, nil); res.Status == http.StatusOK {
					clears++
				}
			}
		}
	}()
	for p := range posters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := range exchanges {
				id := fmt.Sprintf("p%d-x%d", p, x)
				turns := []memory.Turn{
					{ID: id + "-q", Role: memory.RoleUser, Content: "Question " + id},
					{ID: id + "-a", Role: memory.RoleAssistant, Content: "Answer " + id},
				}
				res := svc.PostTurns(t, u, emma, turns...)
				if res.Status == http.StatusOK {
					acknowledged.Store(id, true)
				} else if res.Status != http.StatusServiceUnavailable {
					t.Errorf("post %s: %d %s", id, res.Status, res.Raw)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-clearerDone
	// One more exchange after the last clear, so an active segment exists.
	svc.PostTurns(t, u, emma, memory.Turn{ID: "last-q", Role: memory.RoleUser, Content: "Question last"},
		memory.Turn{ID: "last-a", Role: memory.RoleAssistant, Content: "Answer last"}).WantStatus(http.StatusOK)
	acknowledged.Store("last", true)

	acked := 0
	acknowledged.Range(func(any, any) bool { acked++; return true })
	if acked == 0 {
		t.Fatal("no post was acknowledged")
	}
	// Every acknowledged exchange is stored (a post refused with 503 may
	// or may not have been).
	acknowledged.Range(func(id, _ any) bool {
		if n := svc.Count(t, `select count(*) from conversation_turns where learner_id = $1::uuid and client_turn_id like $2`,
			emma, id.(string)+"-%"); n != 2 {
			t.Errorf("acknowledged exchange %s has %d turns stored, want 2", id, n)
		}
		return true
	})
	// Each turn is stored once, whatever was resent or raced.
	if n := svc.Count(t, `select count(*) from (select content from conversation_turns where learner_id = $1::uuid
		group by content having count(*) > 1) d`, emma); n != 0 {
		t.Fatalf("%d turns stored twice", n)
	}
	// Archived turns are exactly those the archive rows hold.
	archived := svc.Count(t, `select count(*) from conversation_turns where learner_id = $1::uuid and archive_id is not null`, emma)
	if n := svc.Count(t, `select coalesce(sum(turn_count), 0) from conversation_history_archive where learner_id = $1::uuid`, emma); n != archived {
		t.Fatalf("archive rows count %d turns, the log has %d archived", n, archived)
	}
	if n := svc.Count(t, `select coalesce(sum(jsonb_array_length(conversation_turns)), 0) from conversation_history_archive where learner_id = $1::uuid`, emma); n != archived {
		t.Fatalf("archive rows hold %d turns, the log has %d archived", n, archived)
	}
	if n := svc.Count(t, `select count(*) from (select t->>'content' from conversation_history_archive a,
		jsonb_array_elements(a.conversation_turns) t where a.learner_id = $1::uuid group by 1 having count(*) > 1) d`, emma); n != 0 {
		t.Fatalf("%d turns are in two archived segments", n)
	}
	// The active record counts exactly the turns not archived.
	active := svc.Count(t, `select count(*) from conversation_turns where learner_id = $1::uuid and archive_id is null`, emma)
	if n := svc.Count(t, `select coalesce(sum(turn_count), 0) from conversation_updates where learner_id = $1::uuid`, emma); n != active {
		t.Fatalf("the active record counts %d turns, the log has %d active", n, active)
	}
	if active > 0 && svc.Count(t, `select count(*) from conversation_updates where learner_id = $1::uuid`, emma) != 1 {
		t.Fatal("active turns without their active record")
	}
	t.Logf("%d exchanges acknowledged, %d clears, %d turns archived, %d active", acked, clears, archived, active)
	if total := svc.Count(t, `select count(*) from conversation_turns where learner_id = $1::uuid`, emma); total != archived+active {
		t.Fatalf("%d turns, %d archived + %d active", total, archived, active)
	}
}
