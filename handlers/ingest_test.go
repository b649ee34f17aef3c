package handlers_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
	"mentormemory/migrations"
)

// history builds n turns alternating user and assistant, optionally with
// client ids.
func history(n int, withIDs bool) []mentor.Turn {
	turns := make([]mentor.Turn, n)
	for i := range turns {
		role := mentor.RoleUser
		if i%2 == 1 {
			role = mentor.RoleAssistant
		}
		turns[i] = mentor.Turn{Role: role, Content: fmt.Sprintf("message %d about reading practice", i)}
		if withIDs {
			turns[i].ID = fmt.Sprintf("turn-%d", i)
		}
	}
	return turns
}

func TestResendingTheWholeHistoryStoresEachTurnOnce(t *testing.T) {
	for _, withIDs := range []bool{false, true} {
		t.Run(fmt.Sprintf("ids=%v", withIDs), func(t *testing.T) {
			svc, u := apptest.StartWithUser(t, apptest.Options{})
			all := history(12, withIDs)
			// The original client posts its whole history after every reply,
			// and retries the same request after a timeout.
			for n := 2; n <= len(all); n += 2 {
				for range 2 {
					res := svc.PostTurns(t, u, "", all[:n]...).WantStatus(http.StatusOK)
					if got := number(res.Object("conversation_update")["turn_count"]); got != n {
						t.Fatalf("after posting %d turns, turn_count = %d", n, got)
					}
				}
			}
			if n := svc.Count(t, `select count(*) from conversation_turns where facilitator_id = $1::uuid`, u.ID); n != len(all) {
				t.Fatalf("log holds %d turns, want %d", n, len(all))
			}
			// An incremental client posting only the last exchange again adds
			// nothing either.
			res := svc.PostTurns(t, u, "", all[len(all)-2:]...).WantStatus(http.StatusOK)
			if res.Body["turns_added"] != 0.0 {
				t.Fatalf("resent exchange was stored again: %s", res.Raw)
			}
		})
	}
}

func TestRepeatedWordsInANewExchangeAreStored(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	svc.PostTurns(t, u, "", apptest.Exchange("Thanks!", "You're welcome.")...).WantStatus(http.StatusOK)
	svc.PostTurns(t, u, "", apptest.Exchange("How do I help with spelling?", "Use word families.")...).WantStatus(http.StatusOK)
	// Same words as an earlier exchange, but not the latest stored turns:
	// a new exchange, not a resend.
	res := svc.PostTurns(t, u, "", apptest.Exchange("Thanks!", "You're welcome.")...).WantStatus(http.StatusOK)
	if res.Body["turns_added"] != 2.0 || number(res.Object("conversation_update")["turn_count"]) != 6 {
		t.Fatalf("new exchange was taken for a resend: %s", res.Raw)
	}
}

func TestParallelPostsKeepExactCounts(t *testing.T) {
	svc, u, learner := apptest.StartWithLearner(t, apptest.Options{ArchiveTurns: 1000}, "Max")
	const clients, posts = 8, 5
	var wg sync.WaitGroup
	errs := make(chan string, clients*posts)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range posts {
				turns := apptest.Exchange(fmt.Sprintf("client %d question %d", c, p), fmt.Sprintf("client %d answer %d", c, p))
				turns[0].ID, turns[1].ID = fmt.Sprintf("c%d-p%d-q", c, p), fmt.Sprintf("c%d-p%d-a", c, p)
				res := svc.Call(t, u.Token, http.MethodPost, "/api/conversation-memory",
					map[string]any{"learner_id": learner, "conversation_turns": turns})
				if res.Status != http.StatusOK {
					errs <- string(res.Raw)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("post failed: %s", err)
	}
	want := clients * posts * 2
	got := svc.Call(t, u.Token, http.MethodGet, "/api/conversation-memory?learner_id="+learner, nil).WantStatus(http.StatusOK)
	if n := number(got.Object("conversation_update")["turn_count"]); n != want {
		t.Fatalf("turn_count = %d, want %d", n, want)
	}
	if n := svc.Count(t, `select count(*) from conversation_turns where learner_id = $1::uuid`, learner); n != want {
		t.Fatalf("log holds %d turns, want %d", n, want)
	}
}

// TestClearRacingPostsLosesNoTurn clears a conversation again and again
// while exchanges are posted to it. Every acknowledged turn must end up
// exactly once in the log, either in the active segment or in one archived
// segment, never in both and never in neither, and the counts must agree.
func TestClearRacingPostsLosesNoTurn(t *testing.T) {
	const posters, exchanges = 4, 12
	svc, u, emma := apptest.StartWithLearner(t, apptest.Options{ArchiveTurns: 6}, "Emma")

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
				turns := []mentor.Turn{
					{ID: id + "-q", Role: mentor.RoleUser, Content: "Question " + id},
					{ID: id + "-a", Role: mentor.RoleAssistant, Content: "Answer " + id},
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
	svc.PostTurns(t, u, emma, mentor.Turn{ID: "last-q", Role: mentor.RoleUser, Content: "Question last"},
		mentor.Turn{ID: "last-a", Role: mentor.RoleAssistant, Content: "Answer last"}).WantStatus(http.StatusOK)
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
	archived := svc.Count(t, `select count(*) from conversation_turns t
		where t.facilitator_id = $1::uuid and t.learner_id = $2::uuid and `+migrations.ArchiveOf("t")+` is not null`, u.ID, emma)
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
	active := svc.Count(t, `select count(*) from conversation_turns t
		where t.facilitator_id = $1::uuid and t.learner_id = $2::uuid and `+migrations.ArchiveOf("t")+` is null`, u.ID, emma)
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

func TestAutoArchiveEveryFiftyTurns(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	all := history(104, true)
	var last apptest.Response
	archivedAt := 0
	for n := 0; n < len(all); n += 2 {
		last = svc.PostTurns(t, u, "", all[n:n+2]...).WantStatus(http.StatusOK)
		if last.Body["archived"] == true {
			archivedAt++
		}
	}
	if archivedAt != 2 {
		t.Fatalf("want 2 posts reporting an archive, got %d", archivedAt)
	}
	conv := last.Object("conversation_update")
	if number(conv["turn_count"]) != 4 || len(conv["recent_turns"].([]any)) != 10 || conv["summary"] == "" {
		t.Fatalf("active record after archiving: %s", last.Raw)
	}
	rows, err := svc.Pool.Query(t.Context(), `select turn_count, jsonb_array_length(conversation_turns),
		conversation_turns->0->>'content', coalesce(summary, '') from conversation_history_archive
		where facilitator_id = $1::uuid order by archived_at`, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	segment := 0
	for rows.Next() {
		var count, stored int
		var first, summary string
		if err := rows.Scan(&count, &stored, &first, &summary); err != nil {
			t.Fatal(err)
		}
		if count != 50 || stored != 50 || first != all[segment*50].Content || summary == "" {
			t.Fatalf("segment %d: count %d, stored %d, first %q, summary %q", segment, count, stored, first, summary)
		}
		segment++
	}
	if segment != 2 {
		t.Fatalf("want 2 archived segments, got %d", segment)
	}
	// Every turn is in exactly one place: an archived segment or the active one.
	if n := svc.Count(t, `select count(*) from conversation_turns t where t.facilitator_id = $1::uuid and `+migrations.ArchiveOf("t")+` is null`, u.ID); n != 4 {
		t.Fatalf("active segment holds %d turns, want 4", n)
	}
}
