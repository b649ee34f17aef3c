package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app/apptest"
	"mentormemory/extractor"
	"mentormemory/llm"
	"mentormemory/llm/llmtest"
	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
	"mentormemory/summarizer"
	"mentormemory/worker"
)

// memoriesReply is a structured-output reply holding the given memories,
// about pets.
func memoriesReply(contents ...string) string {
	items := []map[string]any{}
	for _, c := range contents {
		items = append(items, personalMemory(c, "pets"))
	}
	out, _ := json.Marshal(map[string]any{"memories": items})
	return string(out)
}

// personalMemory is one memory of a structured-output reply.
func personalMemory(content, topic string) map[string]any {
	return map[string]any{
		"type": "personal", "content": content, "importance": 0.6, "confidence": 0.7,
		"metadata": map[string]any{"emotion": nil, "valence": nil, "resolution": nil, "topic": topic,
			"category": nil, "trigger": nil, "response": nil, "next_topic": nil},
	}
}

type env struct {
	t           testing.TB
	facilitator apptest.User
	pool        *pgxpool.Pool
	store       *postgres.Store
	svc         *mentor.Service
	model       *llmtest.Server[llmtest.ChatRequest]
	worker      *worker.Worker
	ctx         context.Context // as the facilitator
	alex        *string

	// reply answers the model's nth request (from 1): a status and, when
	// 200, the reply's content. Tests set it before the model is asked.
	reply func(n int) (status int, content string)
}

func newEnv(t testing.TB, cfg worker.Config) *env {
	t.Helper()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := &env{t: t, pool: pool, reply: func(int) (int, string) { return http.StatusOK, memoriesReply() }}
	e.model = llmtest.NewScriptedChat(t, func(n int, _ llmtest.ChatRequest) http.HandlerFunc {
		status, content := e.reply(n)
		if status != http.StatusOK {
			return llmtest.ReplyError(status, "overloaded")
		}
		return llmtest.ReplyContent(content, "stop")
	})
	e.store = postgres.NewStore(pool, 50).WithExtraction()
	e.svc = mentor.NewService(e.store, summarizer.NewOffline(), log)
	cfg.Extractor = extractor.NewOpenAI(llm.Config{APIKey: "test", BaseURL: e.model.URL, Timeout: 5 * time.Second})
	e.worker = worker.New(e.store, cfg, log)

	e.facilitator = apptest.NewUser(t, pool)
	e.ctx = mentor.WithCaller(context.Background(), e.facilitator.Caller())
	alex := apptest.NewLearner(t, pool, e.facilitator, "Alex")
	e.alex = &alex
	return e
}

func (e *env) exec(query string, args ...any) {
	e.t.Helper()
	apptest.Exec(e.t, e.pool, query, args...)
}

func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	return apptest.Count(e.t, e.pool, query, args...)
}

func (e *env) post(user, assistant string) {
	e.t.Helper()
	if _, err := e.svc.Update(e.ctx, e.alex, apptest.Exchange(user, assistant), false); err != nil {
		e.t.Fatal(err)
	}
}

// endSession ends Alex's current session.
func (e *env) endSession() {
	e.t.Helper()
	if _, err := e.svc.EndSession(e.ctx, e.alex); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) runOnce() bool {
	e.t.Helper()
	ran, err := e.worker.RunOnce(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return ran
}

func TestExtractionLearnsOnceFromEachExchange(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.reply = func(int) (int, string) { return 200, memoriesReply("Alex has a dog named Max") }
	e.post("gotta go feed my dog Max", "Say hi to Max!")
	// A resend of the same exchange queues nothing more.
	e.post("gotta go feed my dog Max", "Say hi to Max!")
	if n := e.count(`select count(*) from memory_jobs where status = 'pending'`); n != 1 {
		t.Fatalf("want 1 queued job, got %d", n)
	}

	if !e.runOnce() {
		t.Fatal("the queued job did not run")
	}
	if e.runOnce() {
		t.Fatal("a finished job ran again")
	}
	if len(e.model.Calls()) != 1 {
		t.Fatalf("model called %d times, want 1", len(e.model.Calls()))
	}
	list, err := e.svc.ListMemories(e.ctx, mentor.ListQuery{LearnerID: e.alex})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("want 1 memory, got %+v", list)
	}
	m := list[0]
	if m.Content != "Alex has a dog named Max" || m.Source != mentor.SourceExtracted || m.SessionID == nil ||
		len(m.SourceTurnIDs) != 2 || m.Metadata["topic"] != "pets" {
		t.Fatalf("memory %+v", m)
	}
	if n := e.count(`select count(*) from memory_jobs where status = 'done' and attempts = 1 and lease_token is null`); n != 1 {
		t.Fatal("the job is not marked done")
	}
	// The session's closing state lists what was learnt.
	ended, err := e.svc.EndSession(e.ctx, e.alex)
	if err != nil {
		t.Fatal(err)
	}
	if len(ended.Closing.NewMemories) != 1 || ended.Closing.NewMemories[0] != "Alex has a dog named Max" {
		t.Fatalf("closing new memories %v", ended.Closing.NewMemories)
	}

	// The same fact learnt again in another exchange reinforces the memory.
	e.post("Max the dog chewed my homework", "Oh no, Max!")
	e.runOnce()
	list, _ = e.svc.ListMemories(e.ctx, mentor.ListQuery{LearnerID: e.alex})
	if len(list) != 1 || list[0].Mentions != 2 || list[0].Confidence <= 0.7 || len(list[0].SourceTurnIDs) != 4 {
		t.Fatalf("the repeat should merge: %+v", list)
	}
}

func TestExtractionRetriesWithBackoffThenFails(t *testing.T) {
	e := newEnv(t, worker.Config{MaxAttempts: 2})
	e.reply = func(int) (int, string) { return 500, "" }
	e.post("I'm stressed about Friday's test", "We'll prepare step by step.")

	e.runOnce()
	var status, lastError string
	var attempts int
	var wait time.Duration
	row := e.pool.QueryRow(context.Background(), `select status, attempts, coalesce(last_error, ''),
		extract(epoch from run_after - now())::float8 * interval '1 second' from memory_jobs`)
	if err := row.Scan(&status, &attempts, &lastError, &wait); err != nil {
		t.Fatal(err)
	}
	if status != "pending" || attempts != 1 || lastError == "" || wait < 3*time.Second {
		t.Fatalf("after a failure: status %s, attempts %d, error %q, retry in %v; want pending, 1, an error, ~5s", status, attempts, lastError, wait)
	}
	if e.runOnce() {
		t.Fatal("the job ran again before its backoff")
	}
	// Time passes; the model still fails, and the attempts are used up.
	e.exec(`update memory_jobs set run_after = now()`)
	e.runOnce()
	if n := e.count(`select count(*) from memory_jobs where status = 'failed' and attempts = 2 and finished_at is not null`); n != 1 {
		t.Fatal("the job should be failed for good after its attempts")
	}
	if n := e.count(`select count(*) from learner_memories`); n != 0 {
		t.Fatalf("a failed extraction stored %d memories", n)
	}
	// The turns themselves are safe.
	if n := e.count(`select count(*) from conversation_turns`); n != 2 {
		t.Fatalf("turns lost: %d", n)
	}
}

func TestMalformedExtractionStoresNothing(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.reply = func(n int) (int, string) {
		if n == 1 {
			return 200, `{"memories": [{"type": "personal", "content": 5}]}`
		}
		return 200, memoriesReply("Alex likes space")
	}
	e.post("I like space stuff", "Space examples next time.")
	e.runOnce()
	if n := e.count(`select count(*) from learner_memories`); n != 0 {
		t.Fatalf("malformed reply stored %d memories", n)
	}
	if n := e.count(`select count(*) from memory_jobs where status = 'pending' and last_error like '%schema%'`); n != 1 {
		t.Fatal("a malformed reply should leave the job to retry")
	}
	e.exec(`update memory_jobs set run_after = now()`)
	e.runOnce()
	if n := e.count(`select count(*) from learner_memories where content = 'Alex likes space'`); n != 1 {
		t.Fatal("the retry should store the memory")
	}
}

func TestLostLeaseTakesNoEffect(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.post("my dog Max is sick", "I'm sorry to hear that.")
	slow, err := e.store.ClaimJob(context.Background())
	if err != nil || slow == nil {
		t.Fatalf("claim: %v %v", slow, err)
	}
	// The first worker stalls past its lease; another takes the job over.
	e.exec(`update memory_jobs set leased_until = now() - interval '1 second'`)
	e.reply = func(int) (int, string) { return 200, memoriesReply("Alex's dog Max is sick") }
	if !e.runOnce() {
		t.Fatal("an expired lease should make the job due again")
	}
	_, err = e.store.CompleteExtraction(e.ctxFor(), *slow, []mentor.NewMemory{{Type: mentor.Personal, Content: "Alex's dog Max is sick", Importance: 0.5, Confidence: 0.5}})
	if !errors.Is(err, mentor.ErrLeaseLost) {
		t.Fatalf("the stalled worker should lose its lease, got %v", err)
	}
	if n := e.count(`select count(*) from learner_memories where mentions = 1`); n != 1 {
		t.Fatal("the job took effect twice")
	}
}

func (e *env) ctxFor() context.Context { return e.ctx }

func TestIdleSessionsAreEnded(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.post("Next time: fractions?", "Yes, next time we'll start fractions.")
	if n, err := e.worker.EndIdleSessions(context.Background()); err != nil || n != 0 {
		t.Fatalf("an active session was ended: %d %v", n, err)
	}
	e.exec(`update mentor_sessions set last_activity_at = now() - interval '31 minutes'`)
	if n, err := e.worker.EndIdleSessions(context.Background()); err != nil || n != 1 {
		t.Fatalf("ended %d idle sessions (%v), want 1", n, err)
	}
	opening, err := e.svc.OpeningContext(e.ctx, e.alex, time.Now())
	if err != nil || opening == nil || len(opening.UnfinishedThreads) == 0 {
		t.Fatalf("the idle session's opening: %+v %v", opening, err)
	}
}

// Turn ids come from one sequence for all conversations, so an exchange's
// id range can take in a turn another conversation stored meanwhile; the
// job must learn only from its own conversation's turns.
func TestExtractionReadsOnlyItsConversation(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.reply = func(int) (int, string) { return 200, memoriesReply("Alex has a dog named Max") }
	if _, err := e.svc.Update(e.ctx, nil, apptest.Exchange("A family matter", "Noted."), false); err != nil {
		t.Fatal(err)
	}
	e.post("gotta go feed my dog Max", "Say hi to Max!")
	// As if the general conversation's turns had been stored in the middle
	// of Alex's exchange.
	e.exec(`update memory_jobs set payload = jsonb_set(payload, '{from_turn_id}',
		(select to_jsonb(min(id)) from conversation_turns)) where learner_id is not null`)
	e.exec(`update memory_jobs set status = 'done' where learner_id is null`)
	e.runOnce()
	if n := e.count(`select count(*) from learner_memories m where cardinality(m.source_turn_ids) = 2
		and not exists (select 1 from conversation_turns t
			where t.facilitator_id = m.facilitator_id and t.id = any(m.source_turn_ids) and t.learner_id is null)`); n != 1 {
		t.Fatal("the memory's source turns should be Alex's two, not the general conversation's")
	}
}

func TestJobsRunConcurrently(t *testing.T) {
	e := newEnv(t, worker.Config{Concurrency: 3, Poll: 50 * time.Millisecond})
	// Each model call waits until three are in flight at once, which only
	// happens when three jobs run side by side.
	var mu sync.Mutex
	inFlight, most := 0, 0
	allIn := make(chan struct{})
	e.reply = func(int) (int, string) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == 3 {
			close(allIn)
		}
		mu.Unlock()
		select {
		case <-allIn:
		case <-time.After(10 * time.Second):
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		return 200, memoriesReply()
	}
	e.post("Alex finished the fractions sheet.", "Great, try mixed numbers next.")
	e.post("He asked about volcanoes today.", "Let's build a baking-soda volcano.")
	e.post("Bedtime reading went well.", "Keep the same book for a week.")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		e.worker.Run(ctx)
		close(done)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for e.count(`select count(*) from public.memory_jobs where status = 'done'`) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if n := e.count(`select count(*) from public.memory_jobs where status = 'done'`); n != 3 {
		t.Fatalf("%d of 3 jobs done", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 3 {
		t.Fatalf("at most %d model calls in flight, want 3: the jobs ran one after another", most)
	}
}

// Jobs the service never queued (the table is reachable through Supabase's
// Data API) are failed for good as they are claimed, each with its reason,
// and hold no real job back: the real one runs on the first claim.
func TestMalformedJobsAreFailedAndDoNotHoldBackARealOne(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.reply = func(int) (int, string) { return 200, memoriesReply("Alex has a dog named Max") }
	caller, _ := mentor.CallerFrom(e.ctx)
	facilitator := caller.UserID
	malformed := []string{
		`{}`,
		`{"session_id": "not-a-uuid", "from_turn_id": 1, "through_turn_id": 2}`,
		`{"session_id": "0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11", "from_turn_id": "one", "through_turn_id": 2}`,
		`{"session_id": "0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11", "from_turn_id": 5, "through_turn_id": 2}`,
		`{"session_id": "0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11", "from_turn_id": 1, "through_turn_id": 9000000000}`,
	}
	for i := range 400 {
		e.exec(`insert into memory_jobs (facilitator_id, learner_id, kind, dedupe_key, payload, run_after)
			values ($1::uuid, $2::uuid, 'extract', $3, $4::jsonb, now() - interval '1 hour')`,
			facilitator, *e.alex, "forged:"+strconv.Itoa(i), malformed[i%len(malformed)])
	}
	// Queued after them, the real job comes after them in the claim order.
	e.post("gotta go feed my dog Max", "Say hi to Max!")

	if !e.runOnce() {
		t.Fatal("the real job did not run")
	}
	if n := e.count(`select count(*) from learner_memories where content = 'Alex has a dog named Max'`); n != 1 {
		t.Fatal("the real job should have run on the first claim")
	}
	if n := e.count(`select count(*) from memory_jobs where dedupe_key like 'forged:%'
		and status = 'failed' and attempts = 1 and last_error like 'malformed job%' and finished_at is not null`); n != 400 {
		t.Fatalf("%d of 400 malformed jobs failed for good with their reason", n)
	}
	if e.runOnce() {
		t.Fatal("a malformed job was claimed again")
	}
	if len(e.model.Calls()) != 1 {
		t.Fatalf("the model was asked %d times; only the real job should reach it", len(e.model.Calls()))
	}
}

// A session whose stored closing state cannot be read is ended by the
// sweep like any other, and the others with it.
func TestIdleSweepEndsASessionWithAnUnreadableClosingState(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.post("Next time: fractions?", "Yes, next time we'll start fractions.")
	if _, err := e.svc.Update(e.ctx, nil, apptest.Exchange("A family matter", "Noted."), false); err != nil {
		t.Fatal(err)
	}
	const unreadable = `update mentor_sessions set closing = '{"exchanges": "many", "emotional_arc": "sad"}' where learner_id is not null`
	e.exec(unreadable)
	// Its conversation still takes posts.
	e.post("Still there?", "Yes.")
	e.exec(unreadable)
	e.exec(`update mentor_sessions set last_activity_at = now() - interval '31 minutes'`)
	if n, err := e.worker.EndIdleSessions(context.Background()); err != nil || n != 2 {
		t.Fatalf("ended %d idle sessions (%v), want both", n, err)
	}
	if n := e.count(`select count(*) from mentor_sessions where ended_at is null`); n != 0 {
		t.Fatalf("%d sessions left live", n)
	}
}

// A model's refusal or error body that quotes the exchange reaches neither
// the worker's log nor memory_jobs.last_error, which users can read: both
// say how the model failed, by kind or status.
func TestModelTextNeverReachesTheJobOrTheLog(t *testing.T) {
	const memoryText = "Alex was diagnosed with dyslexia"
	e := newEnv(t, worker.Config{})
	quoting := llmtest.NewScriptedChat(t, func(n int, _ llmtest.ChatRequest) http.HandlerFunc {
		if n == 1 {
			return llmtest.Reply(map[string]any{"role": "assistant", "content": nil, "refusal": "I won't keep that " + memoryText}, "stop")
		}
		return func(w http.ResponseWriter, _ *http.Request) {
			llmtest.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
				"message": "Cannot process: " + memoryText, "type": "invalid_request_error", "code": memoryText}})
		}
	})
	logs := &apptest.Logs{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w := worker.New(e.store, worker.Config{MaxAttempts: 2, Extractor: extractor.NewOpenAI(
		llmtest.Config(quoting.URL, llm.Config{Timeout: 5 * time.Second, Logger: log}),
	)}, log)
	e.post(memoryText+", so reading is slow.", "Thank you for telling me.")

	for _, want := range []struct{ status, lastError string }{
		{"pending", "The memory extraction model failed: refusal"},
		{"failed", "The memory extraction model failed: model API status 400 type invalid_request_error"},
	} {
		e.exec(`update memory_jobs set run_after = now()`)
		if ran, err := w.RunOnce(context.Background()); !ran || err != nil {
			t.Fatalf("the job did not run: %v", err)
		}
		status := apptest.Scalar[string](t, e.pool, `select status from memory_jobs`)
		lastError := apptest.Scalar[string](t, e.pool, `select last_error from memory_jobs`)
		if status != want.status || !strings.HasSuffix(lastError, want.lastError) {
			t.Fatalf("job %s with last_error %q, want %s with one ending in %q", status, lastError, want.status, want.lastError)
		}
	}
	logged := logs.String()
	if !strings.Contains(logged, "memory extraction failed") || strings.Contains(logged, "dyslexia") {
		t.Fatalf("the failures should be logged without the model's text:\n%s", logged)
	}
}

// A summary changed by a post is parsed for search once it has stood
// unchanged for the settle time (by default worker.DefaultSummarySettle),
// and not before; a sweep parses every settled one, however many batches
// they take.
func TestSettledSummariesAreParsedForSearch(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.post("Alex built a paper crane today.", "Origami suits his patience.")
	stale := `select count(*) from conversation_updates where summary <> '' and summary_vector is null`
	if n := e.count(stale); n != 1 {
		t.Fatalf("%d conversations with a summary not parsed yet, want the one posted to", n)
	}
	if n, err := e.worker.RefreshSummaryVectors(context.Background()); err != nil || n != 0 {
		t.Fatalf("parsed %d summaries (%v) within the settle time, want none", n, err)
	}

	// Past a batch's worth of other conversations, all settled.
	e.exec(`with l as (insert into learners (facilitator_id, name)
			select $1::uuid, 'Learner ' || i from generate_series(1, 250) i returning id)
		insert into conversation_updates (facilitator_id, learner_id, summary)
		select $1::uuid, l.id, 'Talked about kites.' from l`, e.facilitator.ID)
	e.exec(`update private.summary_vectors_due set listed_at = now() - interval '2 hours'`)
	n, err := e.worker.RefreshSummaryVectors(context.Background())
	if err != nil || n != 251 {
		t.Fatalf("parsed %d summaries (%v), want all 251 settled ones", n, err)
	}
	if n := e.count(stale); n != 0 {
		t.Errorf("%d summaries left unparsed", n)
	}
	if n := e.count(`select count(*) from conversation_updates
		where summary_vector is distinct from summary_search_vector(summary)`); n != 0 {
		t.Errorf("%d stored vectors differ from their summary's words", n)
	}
	if n := e.count(`select count(*) from private.summary_vectors_due`); n != 0 {
		t.Errorf("%d conversations still listed", n)
	}
}
