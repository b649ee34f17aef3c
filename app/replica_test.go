package app_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/metrics"
	"mentormemory/postgres/pgtest"
)

// These tests read from the hot standby that scripts/test.sh starts
// (TEST_DATABASE_REPLICA_URL), which every test package shares: they never
// stop or pause it. Those that do are in test/faults, on a primary and a
// standby of their own.

// startWithReplica runs the app reading from the shared standby. Its bound
// on the lag is generous: other packages load the standby as they run.
func startWithReplica(t *testing.T) *apptest.Service {
	t.Helper()
	svc := apptest.Start(t, apptest.Options{Standby: pgtest.StandbyURL(t), ReplicaMaxLag: time.Minute,
		Web: config.Web{MetricsToken: "metrics-token-of-the-operator"}})
	svc.WaitForReplica(t, true)
	return svc
}

// servedByReplica calls read and checks that it was served by the replica,
// once, and by nothing else, as the operator's counters tell.
func servedByReplica(t *testing.T, svc *apptest.Service, what string, read func()) {
	t.Helper()
	before := svc.Scrape(t)
	read()
	after := svc.Scrape(t)
	if got := after.Reads(metrics.ReadOnReplica, metrics.ReplicaFresh) - before.Reads(metrics.ReadOnReplica, metrics.ReplicaFresh); got != 1 {
		t.Errorf("%s: %v reads served by the replica, want 1", what, got)
	}
	if got := primaryReads(after) - primaryReads(before); got != 0 {
		t.Errorf("%s: %v reads that the replica may answer went to the primary, want none:\n%s", what, got, after)
	}
}

// primaryReads counts the reads the replica may answer that the primary
// answered, whatever the reason.
func primaryReads(scrape apptest.Scrape) float64 {
	total := 0.0
	for _, reason := range []string{metrics.ReplicaDown, metrics.ReplicaLagging, metrics.OwnWrite, metrics.ReplicaFailed} {
		total += scrape.Reads(metrics.ReadOnPrimary, reason)
	}
	return total
}

// Search, recall, the session's opening, the memory list, the mentor's
// tools and the export are answered by the replica once it has replayed
// the facilitator's writes, with what was written; reading the
// conversation itself stays on the primary.
func TestTheReadsThatMayLagAreAnsweredByTheReplica(t *testing.T) {
	svc := startWithReplica(t)
	dana := svc.NewUser(t)
	emma := svc.NewLearner(t, dana, "Emma")
	svc.PostTurns(t, dana, emma, apptest.Exchange("Emma mixes up numerators and denominators",
		"Cut a pizza into eighths and name the parts")...).WantStatus(http.StatusOK)
	svc.AddMemory(t, dana, emma, map[string]any{"type": "academic", "content": "Emma confuses numerators and denominators"})
	svc.EndSession(t, dana, emma)
	pgtest.WaitForReplay(t, svc.Pool.Config().ConnString(), svc.ReplicaURL)

	servedByReplica(t, svc, "search", func() {
		res := svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?include_archive=true&search=denominators", nil).
			WantStatus(http.StatusOK)
		if res.Body["count"] != 1.0 {
			t.Errorf("search found %v conversations, want Emma's: %s", res.Body["count"], res.Raw)
		}
	})
	servedByReplica(t, svc, "the search tool", func() {
		res := svc.Call(t, dana.Token, http.MethodPost, "/api/tools/call",
			map[string]any{"name": "search_conversation_history", "arguments": `{"search":"pizza","include_archive":true}`}).WantStatus(http.StatusOK)
		if !strings.Contains(string(res.Raw), "eighths") {
			t.Errorf("the search tool did not find the pizza: %s", res.Raw)
		}
	})
	servedByReplica(t, svc, "recall", func() {
		res := svc.Call(t, dana.Token, http.MethodGet, "/api/memories/context?learner_id="+emma+"&message=fractions+homework", nil).
			WantStatus(http.StatusOK)
		if !strings.Contains(string(res.Raw), "Emma confuses numerators") {
			t.Errorf("recall did not bring back the memory: %s", res.Raw)
		}
	})
	servedByReplica(t, svc, "the memory list", func() {
		res := svc.Call(t, dana.Token, http.MethodGet, "/api/memories?learner_id="+emma, nil).WantStatus(http.StatusOK)
		if !strings.Contains(string(res.Raw), "Emma confuses numerators") {
			t.Errorf("the memory list lacks the memory: %s", res.Raw)
		}
	})
	servedByReplica(t, svc, "the opening", func() {
		res := svc.Call(t, dana.Token, http.MethodGet, "/api/opening-context?learner_id="+emma, nil).WantStatus(http.StatusOK)
		if res.Body["opening"] == nil {
			t.Errorf("no opening after the session ended: %s", res.Raw)
		}
	})
	servedByReplica(t, svc, "the export", func() {
		res := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodGet, Path: "/api/export", Token: dana.Token})
		if res.Status != http.StatusOK || !strings.Contains(string(res.Raw), "Cut a pizza into eighths") ||
			!strings.Contains(string(res.Raw), `"type":"end"`) {
			t.Errorf("the export: %d %s", res.Status, res.Raw)
		}
	})

	// The conversation is read where it was written.
	before := svc.Scrape(t)
	svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if svc.Scrape(t).Reads(metrics.ReadOnReplica, metrics.ReplicaFresh) != before.Reads(metrics.ReadOnReplica, metrics.ReplicaFresh) {
		t.Error("GET /api/conversation-memory was served by the replica; it must read the primary")
	}
}

// Row-level security holds on the replica as on the primary: it is the
// same database, and a read there runs as the caller with the same
// settings. Another facilitator's learner is not found and their words
// find nothing, through every route the replica answers.
func TestRowLevelSecurityHoldsOnTheReplica(t *testing.T) {
	svc := startWithReplica(t)
	dana, other := svc.NewUser(t), svc.NewUser(t)
	emma := svc.NewLearner(t, dana, "Emma")
	svc.PostTurns(t, dana, emma, apptest.Exchange("Emma is anxious about the swimming gala",
		"Practise the starts in a quiet lane first")...).WantStatus(http.StatusOK)
	svc.AddMemory(t, dana, emma, map[string]any{"type": "personal", "content": "Emma is anxious about the swimming gala"})
	svc.EndSession(t, dana, emma)
	// The other facilitator has a learner and a conversation of their own.
	leo := svc.NewLearner(t, other, "Leo")
	svc.PostTurns(t, other, leo, apptest.Exchange("Leo reads comics", "Comics count as reading")...).WantStatus(http.StatusOK)
	pgtest.WaitForReplay(t, svc.Pool.Config().ConnString(), svc.ReplicaURL)

	servedByReplica(t, svc, "searching for another's words", func() {
		res := svc.Call(t, other.Token, http.MethodGet, "/api/conversation-memory?include_archive=true&search=swimming+gala", nil).
			WantStatus(http.StatusOK)
		if res.Body["count"] != 0.0 {
			t.Errorf("another facilitator's search found Emma's conversation: %s", res.Raw)
		}
	})
	servedByReplica(t, svc, "the search tool on another's words", func() {
		res := svc.Call(t, other.Token, http.MethodPost, "/api/tools/call",
			map[string]any{"name": "search_conversation_history", "arguments": `{"search":"swimming gala","include_archive":true}`}).WantStatus(http.StatusOK)
		if strings.Contains(string(res.Raw), "quiet lane") {
			t.Errorf("the search tool showed Emma's conversation to another facilitator: %s", res.Raw)
		}
	})
	servedByReplica(t, svc, "another's learner's memories", func() {
		svc.Call(t, other.Token, http.MethodGet, "/api/memories?learner_id="+emma, nil).WantError(http.StatusNotFound, "Learner not found")
	})
	// (Recall about another's learner is refused sooner, by the primary,
	// which reads the learner's live session first.)
	svc.Call(t, other.Token, http.MethodGet, "/api/memories/context?learner_id="+emma+"&message=swimming", nil).
		WantError(http.StatusNotFound, "Learner not found")
	servedByReplica(t, svc, "recall of one's own general memories", func() {
		res := svc.Call(t, other.Token, http.MethodGet, "/api/memories/context?message=swimming+gala", nil).WantStatus(http.StatusOK)
		if strings.Contains(string(res.Raw), "anxious") {
			t.Errorf("recall brought another facilitator's memory: %s", res.Raw)
		}
	})
	servedByReplica(t, svc, "another's learner's opening", func() {
		svc.Call(t, other.Token, http.MethodGet, "/api/opening-context?learner_id="+emma, nil).WantError(http.StatusNotFound, "Learner not found")
	})
	servedByReplica(t, svc, "the export", func() {
		res := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodGet, Path: "/api/export", Token: other.Token})
		if res.Status != http.StatusOK || strings.Contains(string(res.Raw), "swimming") || !strings.Contains(string(res.Raw), "comics") {
			t.Errorf("the other facilitator's export: %d %s", res.Status, res.Raw)
		}
	})
	servedByReplica(t, svc, "exporting another's learner", func() {
		svc.Call(t, other.Token, http.MethodGet, "/api/export?learner_id="+emma, nil).WantError(http.StatusNotFound, "Learner not found")
	})
}
