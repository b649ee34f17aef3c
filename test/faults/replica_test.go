package faults

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/handlers"
	"mentormemory/llm/llmtest"
	"mentormemory/mentor"
	"mentormemory/metrics"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// replicated is a primary of the test's own, migrated, and a streaming hot
// standby of it, which the test may stop, freeze or pause at will: other
// packages read from the test run's shared standby, never from these.
type replicated struct {
	primary, standby *privateCluster
}

func startReplicated(t *testing.T) replicated {
	t.Helper()
	primary := startPrivateCluster(t)
	ctx := context.Background()
	pool, err := postgres.Open(ctx, primary.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Migrate(ctx, pool)
	pool.Close()
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return replicated{primary: primary, standby: startStandby(t, primary)}
}

// serve runs a server instance on the primary that reads from standbyURL
// (the standby's, or a proxy's in front of it) as far as maxLag behind,
// each request's transaction bounded by txTimeout (0: the default).
func (r replicated) serve(t *testing.T, standbyURL string, maxLag, txTimeout time.Duration) *apptest.Service {
	t.Helper()
	return r.serveWith(t, apptest.Options{Standby: standbyURL, ReplicaMaxLag: maxLag, TxTimeout: txTimeout})
}

// serveWith runs a server instance on the primary configured by opts,
// which name the standby to read from, with the operator's metrics.
func (r replicated) serveWith(t *testing.T, opts apptest.Options) *apptest.Service {
	t.Helper()
	opts.DatabaseURL = r.primary.url("postgres")
	opts.Web.MetricsToken = "metrics-token-of-the-operator"
	svc := apptest.Start(t, opts)
	svc.WaitForReplica(t, true)
	return svc
}

// waitForReplay waits until the standby has replayed all the primary has
// written.
func (r replicated) waitForReplay(t *testing.T) {
	t.Helper()
	pgtest.WaitForReplay(t, r.primary.url("postgres"), r.standby.url("postgres"))
}

// pauseReplay stops the standby replaying the WAL it receives, as a long
// query on it, or an operator, can; resumeReplay lets it go on.
func (r replicated) pauseReplay(t *testing.T) {
	t.Helper()
	db := connect(t, r.standby.url("postgres"))
	apptest.Exec(t, db, `select pg_wal_replay_pause()`)
	waitFor(t, 10*time.Second, "the standby's replay to pause", func() bool {
		return apptest.Scalar[string](t, db, `select pg_get_wal_replay_pause_state()`) == "paused"
	})
}

func (r replicated) resumeReplay(t *testing.T) {
	t.Helper()
	apptest.Exec(t, connect(t, r.standby.url("postgres")), `select pg_wal_replay_resume()`)
}

// searchFinds searches u's conversations for words and says how many it
// found; any answer but a 200 fails the test.
func searchFinds(t *testing.T, svc *apptest.Service, u apptest.User, words string) int {
	t.Helper()
	return searchWithTokenFinds(t, svc, u, "", words)
}

// searchWithTokenFinds is searchFinds with a request that brings token in
// its Memory-Consistency-Token header (none when empty).
func searchWithTokenFinds(t *testing.T, svc *apptest.Service, u apptest.User, token, words string) int {
	t.Helper()
	res := callWithToken(t, svc, u, token, http.MethodGet, "/api/conversation-memory?include_archive=true&search="+url.QueryEscape(words), nil).
		WantStatus(http.StatusOK)
	return int(res.Body["count"].(float64))
}

// callWithToken sends a request of u's that brings token in its
// Memory-Consistency-Token header (none when empty).
func callWithToken(t *testing.T, svc *apptest.Service, u apptest.User, token, method, path string, body any) apptest.Response {
	t.Helper()
	header := http.Header{}
	if token != "" {
		header.Set(handlers.ConsistencyTokenHeader, token)
	}
	res := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: method, Path: path, Token: u.Token, Body: body, Header: header})
	if res.Err != nil {
		t.Fatalf("%s %s: %v", method, path, res.Err)
	}
	return res
}

// tokenOf is the consistency token an answer carries; the test fails
// without one.
func tokenOf(t *testing.T, res apptest.Response) string {
	t.Helper()
	token := res.Header.Get(handlers.ConsistencyTokenHeader)
	if _, err := mentor.ParseWritePosition(token); err != nil {
		t.Fatalf("the answer to a write carries the token %q: %v", token, err)
	}
	return token
}

// readsBy counts, across scrapes before and after, the reads the replica
// may answer that target served for reason.
func readsBy(before, after apptest.Scrape, target, reason string) float64 {
	return after.Reads(target, reason) - before.Reads(target, reason)
}

// A facilitator who has just posted finds the turns at once, in search and
// in the conversation, though the standby has stopped replaying: the
// server that stored them sends their reads to the primary until the
// standby has them. Another server instance, which did not see the write,
// reads from the standby, a moment behind, as the bound allows; once the
// standby replays again, the first server's reads go back to it.
func TestAFacilitatorReadsTheirOwnWritesWhileTheStandbyDoesNotReplay(t *testing.T) {
	r := startReplicated(t)
	first := r.serve(t, r.standby.url("postgres"), time.Minute, 0)
	second := r.serve(t, r.standby.url("postgres"), time.Minute, 0)
	dana := first.NewUser(t)
	emma := first.NewLearner(t, dana, "Emma")
	r.waitForReplay(t)
	r.pauseReplay(t)

	first.PostTurns(t, dana, emma, apptest.Exchange("Emma finished her first chapter book",
		"Celebrate it and let her choose the next one")...).WantStatus(http.StatusOK)
	before := first.Scrape(t)
	if n := searchFinds(t, first, dana, "chapter book"); n != 1 {
		t.Errorf("right after the post, its server's search found %d conversations, want 1", n)
	}
	res := first.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if !strings.Contains(string(res.Raw), "first chapter book") {
		t.Errorf("right after the post, the conversation lacks it: %s", res.Raw)
	}
	first.AddMemory(t, dana, emma, map[string]any{"type": "academic", "content": "Emma reads chapter books now"})
	res = first.Call(t, dana.Token, http.MethodGet, "/api/memories?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if !strings.Contains(string(res.Raw), "Emma reads chapter books now") {
		t.Errorf("right after adding it, the memory list lacks the memory: %s", res.Raw)
	}
	after := first.Scrape(t)
	if got := readsBy(before, after, metrics.ReadOnPrimary, metrics.OwnWrite); got != 2 {
		t.Errorf("%v reads went to the primary for the facilitator's own write, want 2 (the search, the memory list)", got)
	}
	if got := readsBy(before, after, metrics.ReadOnReplica, metrics.ReplicaFresh); got != 0 {
		t.Errorf("%v reads went to the standby that has not replayed the write", got)
	}

	// The second server did not see the write: it reads the standby, which
	// proves the reads that go there are its, not the primary's.
	before = second.Scrape(t)
	if n := searchFinds(t, second, dana, "chapter book"); n != 0 {
		t.Errorf("the standby that does not replay found %d conversations written since", n)
	}
	if got := readsBy(before, second.Scrape(t), metrics.ReadOnReplica, metrics.ReplicaFresh); got != 1 {
		t.Errorf("the second server's search: %v reads served by the standby, want 1", got)
	}

	r.resumeReplay(t)
	r.waitForReplay(t)
	before = first.Scrape(t)
	if n := searchFinds(t, first, dana, "chapter book"); n != 1 {
		t.Errorf("once replayed, search found %d conversations, want 1", n)
	}
	if got := readsBy(before, first.Scrape(t), metrics.ReadOnReplica, metrics.ReplicaFresh); got != 1 {
		t.Errorf("once the standby has the write, %v reads were served by it, want 1", got)
	}
}

// A facilitator who writes on one server instance and then reads on
// another, while the standby does not replay, sees the write there when
// the reads bring the token the write's answer carried: search, recall
// and the counselor's recall are answered by the primary. Without the
// token, the other instance reads the stale standby, which proves the
// reads with it could have gone there. Once the standby has replayed past
// the token, reads that bring it are the standby's again; a token beyond
// anything the primary wrote does not keep them off it; a malformed one
// is refused.
func TestAReadOnAnotherInstanceSeesTheWriteWhoseTokenItBrings(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Let her choose the next book herself.", "stop"))
	r := startReplicated(t)
	opts := apptest.Options{Standby: r.standby.url("postgres"), ReplicaMaxLag: time.Minute, ModelURL: model.URL}
	writer, reader := r.serveWith(t, opts), r.serveWith(t, opts)
	dana := writer.NewUser(t)
	emma := writer.NewLearner(t, dana, "Emma")
	r.waitForReplay(t)
	r.pauseReplay(t)

	posted := writer.PostTurns(t, dana, emma, apptest.Exchange("Emma finished her first chapter book",
		"Celebrate it and let her choose the next one")...).WantStatus(http.StatusOK)
	added := writer.Call(t, dana.Token, http.MethodPost, "/api/memories", map[string]any{"learner_id": emma, "type": "academic",
		"content": "Emma reads chapter books now"}).WantStatus(http.StatusCreated)
	first, token := tokenOf(t, posted), tokenOf(t, added)
	firstAt, _ := mentor.ParseWritePosition(first)
	if at, _ := mentor.ParseWritePosition(token); at <= firstAt {
		t.Errorf("the second write's token %s is not past the first's %s", token, first)
	}

	recall := "/api/memories/context?learner_id=" + emma + "&message=" + url.QueryEscape("What should Emma read after chapter books?")
	chat := map[string]any{"learner_id": emma, "message": "What should Emma read after her chapter books?"}
	// reads is what the reader is asked each time: a search, recall, and
	// the counselor's message (its recall and its session opening): 4
	// reads that the standby may answer. It says whether each saw the
	// writes.
	const readsAsked = 4
	reads := func(token string) (search, recalled, counselorRecalled bool) {
		t.Helper()
		search = searchWithTokenFinds(t, reader, dana, token, "chapter book") == 1
		res := callWithToken(t, reader, dana, token, http.MethodGet, recall, nil).WantStatus(http.StatusOK)
		recalled = strings.Contains(string(res.Raw), "Emma reads chapter books now")
		callWithToken(t, reader, dana, token, http.MethodPost, "/api/counselor", chat).WantStatus(http.StatusOK)
		counselorRecalled = strings.Contains(model.Last(t).Prompt(), "Emma reads chapter books now")
		return search, recalled, counselorRecalled
	}

	before := reader.Scrape(t)
	if search, recalled, counselor := reads(""); search || recalled || counselor {
		t.Errorf("without the token, the other instance saw the writes on a standby that does not replay them "+
			"(search %v, recall %v, the counselor's recall %v)", search, recalled, counselor)
	}
	if got := readsBy(before, reader.Scrape(t), metrics.ReadOnReplica, metrics.ReplicaFresh); got != readsAsked {
		t.Errorf("without the token, %v reads were served by the standby, want %d", got, readsAsked)
	}

	before = reader.Scrape(t)
	if search, recalled, counselor := reads(token); !search || !recalled || !counselor {
		t.Errorf("with the token, the other instance missed the writes (search found them %v, recall %v, the counselor's recall %v)",
			search, recalled, counselor)
	}
	after := reader.Scrape(t)
	if got := readsBy(before, after, metrics.ReadOnPrimary, metrics.ConsistencyToken); got != readsAsked {
		t.Errorf("with the token, %v reads went to the primary for it, want %d", got, readsAsked)
	}
	if got := readsBy(before, after, metrics.ReadOnReplica, metrics.ReplicaFresh); got != 0 {
		t.Errorf("with the token, %v reads went to the standby that has not replayed the writes", got)
	}

	callWithToken(t, reader, dana, "0/chapter", http.MethodGet, "/api/memories?learner_id="+emma, nil).
		WantError(http.StatusBadRequest, "Memory-Consistency-Token is not a token this service gave: send the newest one an answer carried, as it came")

	r.resumeReplay(t)
	r.waitForReplay(t)
	for _, sent := range []string{token, "FFFFFFFF/FFFFFFFF"} {
		before = reader.Scrape(t)
		if n := searchWithTokenFinds(t, reader, dana, sent, "chapter book"); n != 1 {
			t.Errorf("with the token %s, once replayed, search found %d conversations, want 1", sent, n)
		}
		if got := readsBy(before, reader.Scrape(t), metrics.ReadOnReplica, metrics.ReplicaFresh); got != 1 {
			t.Errorf("with the token %s, once the standby has replayed the writes, %v reads were served by it, want 1", sent, got)
		}
	}
}

// answersWithoutTheStandby checks that u's reads that the standby may
// answer are all answered, with what u wrote, whoever serves them.
func answersWithoutTheStandby(t *testing.T, svc *apptest.Service, u apptest.User, learnerID string) {
	t.Helper()
	if n := searchFinds(t, svc, u, "swimming gala"); n != 1 {
		t.Errorf("search found %d conversations, want 1", n)
	}
	for path, want := range map[string]string{
		"/api/memories?learner_id=" + learnerID:                           "nervous before the gala",
		"/api/memories/context?learner_id=" + learnerID + "&message=gala": "nervous before the gala",
		"/api/opening-context?learner_id=" + learnerID:                    `"opening":`,
	} {
		res := svc.Call(t, u.Token, http.MethodGet, path, nil).WantStatus(http.StatusOK)
		if !strings.Contains(string(res.Raw), want) {
			t.Errorf("GET %s lacks %q: %s", path, want, res.Raw)
		}
	}
	res := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodGet, Path: "/api/export", Token: u.Token})
	if res.Status != http.StatusOK || !strings.Contains(string(res.Raw), "quiet lane") || !strings.Contains(string(res.Raw), `"type":"end"`) {
		t.Errorf("the export: %d %s", res.Status, res.Raw)
	}
}

// readsAnsweredWithoutTheStandby is how many reads answersWithoutTheStandby
// makes that the standby may answer.
const readsAnsweredWithoutTheStandby = 5

// writeSwimmingGala gives u a learner with a conversation, a memory and an
// ended session, and returns the learner.
func writeSwimmingGala(t *testing.T, svc *apptest.Service, u apptest.User) string {
	t.Helper()
	leo := svc.NewLearner(t, u, "Leo")
	svc.PostTurns(t, u, leo, apptest.Exchange("Leo is nervous about the swimming gala",
		"Practise the starts in a quiet lane first")...).WantStatus(http.StatusOK)
	svc.AddMemory(t, u, leo, map[string]any{"type": "personal", "content": "Leo gets nervous before the gala"})
	svc.EndSession(t, u, leo)
	return leo
}

// waitForReadsOnTheStandby waits until a search of u's is served by the
// standby, as reads are once it is back and has u's writes.
func waitForReadsOnTheStandby(t *testing.T, svc *apptest.Service, u apptest.User) {
	t.Helper()
	waitFor(t, 30*time.Second, "a search served by the standby", func() bool {
		before := svc.Scrape(t)
		if n := searchFinds(t, svc, u, "swimming gala"); n != 1 {
			t.Fatalf("search found %d conversations, want 1", n)
		}
		return readsBy(before, svc.Scrape(t), metrics.ReadOnReplica, metrics.ReplicaFresh) == 1
	})
}

// When the standby stops, every read is answered by the primary, with
// what was written, and none fails; once the standby is back, reads return
// to it.
func TestReadsGoToThePrimaryWhileTheStandbyIsDownAndReturnWhenItIsBack(t *testing.T) {
	r := startReplicated(t)
	svc := r.serve(t, r.standby.url("postgres"), time.Second, 0)
	dana := svc.NewUser(t)
	leo := writeSwimmingGala(t, svc, dana)
	r.waitForReplay(t)
	waitForReadsOnTheStandby(t, svc, dana)

	r.standby.stop(t)
	before := svc.Scrape(t)
	answersWithoutTheStandby(t, svc, dana, leo)
	svc.WaitForReplica(t, false)
	answersWithoutTheStandby(t, svc, dana, leo)
	after := svc.Scrape(t)
	if got := readsBy(before, after, metrics.ReadOnPrimary, metrics.ReplicaDown) +
		readsBy(before, after, metrics.ReadOnPrimary, metrics.ReplicaFailed); got != 2*readsAnsweredWithoutTheStandby {
		t.Errorf("%v reads went to the primary while the standby was down, want %d", got, 2*readsAnsweredWithoutTheStandby)
	}
	if got := readsBy(before, after, metrics.ReadOnReplica, metrics.ReplicaFresh); got != 0 {
		t.Errorf("%v reads were served by a standby that is down", got)
	}
	if got := after.Reads(metrics.ReadOnPrimary, metrics.ReplicaDown); got == 0 {
		t.Error("no read was sent to the primary for the standby being down")
	}

	r.standby.start(t)
	svc.WaitForReplica(t, true)
	waitForReadsOnTheStandby(t, svc, dana)
}

// A read the standby fails in the middle, here because its network froze
// and the read ran out of time, is read again on the primary and answered;
// the next reads go straight to the primary until the standby answers
// again, and then back to it.
func TestAReadTheStandbyFailsIsReadAgainOnThePrimary(t *testing.T) {
	r := startReplicated(t)
	proxy := startFreezingProxy(t, fmt.Sprintf("127.0.0.1:%d", r.standby.port))
	// A bound of a minute: the standby is probed once a second, so the
	// search below reaches it before any probe can tell it is frozen.
	svc := r.serve(t, "postgres://postgres@"+proxy.addr+"/postgres?sslmode=disable", time.Minute, time.Second)
	dana := svc.NewUser(t)
	leo := writeSwimmingGala(t, svc, dana)
	r.waitForReplay(t)
	waitForReadsOnTheStandby(t, svc, dana)

	proxy.setFrozen(true)
	before := svc.Scrape(t)
	if n := searchFinds(t, svc, dana, "swimming gala"); n != 1 {
		t.Errorf("the search the frozen standby failed found %d conversations, want 1", n)
	}
	after := svc.Scrape(t)
	if got := readsBy(before, after, metrics.ReadOnPrimary, metrics.ReplicaFailed); got != 1 {
		t.Errorf("%v reads failed on the standby and were read again on the primary, want 1", got)
	}
	answersWithoutTheStandby(t, svc, dana, leo)
	if got := readsBy(after, svc.Scrape(t), metrics.ReadOnPrimary, metrics.ReplicaDown); got != readsAnsweredWithoutTheStandby {
		t.Errorf("after the failure, %v reads went straight to the primary, want %d", got, readsAnsweredWithoutTheStandby)
	}

	proxy.setFrozen(false)
	svc.WaitForReplica(t, true)
	waitForReadsOnTheStandby(t, svc, dana)
}

// A standby that lags more than the bound answers no read until it
// catches up; the reads meanwhile are the primary's.
func TestReadsGoToThePrimaryWhileTheStandbyLagsBeyondTheBound(t *testing.T) {
	r := startReplicated(t)
	svc := r.serve(t, r.standby.url("postgres"), 200*time.Millisecond, 0)
	dana := svc.NewUser(t)
	leo := writeSwimmingGala(t, svc, dana)
	r.waitForReplay(t)
	waitForReadsOnTheStandby(t, svc, dana)

	r.pauseReplay(t)
	// Someone else writes, as another server instance would: the standby,
	// which does not replay it, falls behind.
	svc.NewUser(t)
	waitFor(t, 10*time.Second, "the standby to lag beyond the bound", func() bool {
		return svc.Scrape(t).Value("mentor_db_replica_lag_seconds") > 0.2
	})
	before := svc.Scrape(t)
	answersWithoutTheStandby(t, svc, dana, leo)
	if got := readsBy(before, svc.Scrape(t), metrics.ReadOnPrimary, metrics.ReplicaLagging); got != readsAnsweredWithoutTheStandby {
		t.Errorf("%v reads went to the primary while the standby lagged, want %d", got, readsAnsweredWithoutTheStandby)
	}

	r.resumeReplay(t)
	waitForReadsOnTheStandby(t, svc, dana)
}
