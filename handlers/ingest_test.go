package handlers_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/memory"
)

// history builds n turns alternating user and assistant, optionally with
// client ids.
func history(n int, withIDs bool) []memory.Turn {
	turns := make([]memory.Turn, n)
	for i := range turns {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		turns[i] = memory.Turn{Role: role, Content: fmt.Sprintf("message %d about reading practice", i)}
		if withIDs {
			turns[i].ID = fmt.Sprintf("turn-%d", i)
		}
	}
	return turns
}

func TestResendingTheWholeHistoryStoresEachTurnOnce(t *testing.T) {
	for _, withIDs := range []bool{false, true} {
		t.Run(fmt.Sprintf("ids=%v", withIDs), func(t *testing.T) {
			svc := apptest.Start(t, apptest.Options{})
			u := svc.NewUser(t)
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
	svc := apptest.Start(t, apptest.Options{})
	u := svc.NewUser(t)
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
	svc := apptest.Start(t, apptest.Options{ArchiveTurns: 1000})
	u := svc.NewUser(t)
	learner := svc.NewLearner(t, u, "Max")
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

func TestAutoArchiveEveryFiftyTurns(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	u := svc.NewUser(t)
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
	if n := svc.Count(t, `select count(*) from conversation_turns where facilitator_id = $1::uuid and archive_id is null`, u.ID); n != 4 {
		t.Fatalf("active segment holds %d turns, want 4", n)
	}
}
