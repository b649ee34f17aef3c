package faults

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
	"mentormemory/llm/llmtest"
	"mentormemory/postgres/pgtest"
)

// fakeSummary is what the fake model writes as every rolling summary.
const fakeSummary = "The facilitator shared news about the learner; the mentor suggested a next step."

// lesson is an exchange the fake model learns one memory from.
type lesson struct {
	learner  string
	question string // the facilitator's message, which the model is shown masked
	memory   map[string]any
}

// asShown is the question as the model is shown it, the learner's name
// behind its placeholder.
func (l lesson) asShown() string { return strings.ReplaceAll(l.question, l.learner, "[LEARNER]") }

var lessons = []lesson{
	{"Alex", "Alex and his dog Max sat together through all of his homework tonight.",
		learnt("personal", "Alex has a dog named Max who keeps him company during homework.", "pets")},
	{"Bea", "Bea finally understood equivalent fractions when we cut a pizza into slices!",
		learnt("academic", "Bea understood equivalent fractions through pizza slices.", "fractions")},
	{"Cal", "Cal has basketball practice every Friday so he is worn out on Friday evenings.",
		learnt("personal", "Cal plays basketball on Fridays and is tired afterwards.", "basketball")},
}

// learnt is one memory as the extractor's strict schema has the model
// write it: every metadata key present, null when it does not apply.
func learnt(kind, content, topic string) map[string]any {
	return map[string]any{
		"type": kind, "content": content, "importance": 0.7, "confidence": 0.9,
		"metadata": map[string]any{
			"emotion": nil, "valence": nil, "resolution": nil, "topic": topic,
			"category": nil, "trigger": nil, "response": nil, "next_topic": nil,
		},
	}
}

// slowModel is an OpenAI-compatible chat completions server whose answers
// wait until the test releases them, summaries and extractions apart, so
// the test decides what is in flight when the server is asked to stop.
type slowModel struct {
	*llmtest.Server[llmtest.ChatRequest]
	summaryGate        chan struct{}
	extractionGate     chan struct{}
	releaseSummaries   func()
	releaseExtractions func()

	mu          sync.Mutex
	summaries   int
	extractions []string // the learner of each extraction asked for
}

func newSlowModel(t *testing.T) *slowModel {
	m := &slowModel{summaryGate: make(chan struct{}), extractionGate: make(chan struct{})}
	m.releaseSummaries = sync.OnceFunc(func() { close(m.summaryGate) })
	m.releaseExtractions = sync.OnceFunc(func() { close(m.extractionGate) })
	m.Server = llmtest.NewScriptedChat(t, m.answer)
	// Cleanups run last first: the answers are released before the server
	// closes, as Close waits for the requests in flight.
	t.Cleanup(m.releaseSummaries)
	t.Cleanup(m.releaseExtractions)
	return m
}

func (m *slowModel) answer(_ int, req llmtest.ChatRequest) http.HandlerFunc {
	// The writing of a session's closing words is no work this test
	// holds: it is answered at once.
	if schema, _ := req.ResponseFormat["json_schema"].(map[string]any); schema["name"] == "session_closing" {
		return llmtest.ReplyContent(`{"goodbye": "Good work today.", "summary": "A session."}`, "stop")
	}
	// The extractor asks for structured output; the summarizer for text.
	content, gate := fakeSummary, m.summaryGate
	m.mu.Lock()
	if len(req.ResponseFormat) > 0 {
		gate = m.extractionGate
		found := []map[string]any{}
		for _, l := range lessons {
			if strings.Contains(req.Prompt(), l.asShown()) {
				found = append(found, l.memory)
				m.extractions = append(m.extractions, l.learner)
			}
		}
		reply, _ := json.Marshal(map[string]any{"memories": found})
		content = string(reply)
	} else {
		m.summaries++
	}
	m.mu.Unlock()
	reply := llmtest.ReplyContent(content, "stop")
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
			reply(w, r)
		case <-r.Context().Done():
		}
	}
}

// serverEnv is the environment of a server on databaseURL that uses this
// model.
func (m *slowModel) serverEnv(databaseURL string) map[string]string {
	return map[string]string{
		"DATABASE_URL":        databaseURL,
		"SUPABASE_JWT_SECRET": apptest.Secret,
		"OPENAI_API_KEY":      "sk-fault-suite",
		"OPENAI_BASE_URL":     m.URL,
		"OPENAI_MODEL":        "fault-suite-model",
	}
}

// inFlight reports the summaries asked for so far and the learners whose
// extraction was asked for.
func (m *slowModel) inFlight() (summaries int, extractions []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.summaries, append([]string(nil), m.extractions...)
}

// TestSIGTERMDrainsRequestsAndJobs asks the server to stop (SIGTERM) while
// posts wait for the model's summaries and a background extraction waits
// for the model too. The server refuses new connections, answers every
// post in flight with a 2xx, lets the extraction in progress store its
// memory and finish, and exits with status 0. Extractions it had not
// started stay queued, and the next start learns from them.
func TestSIGTERMDrainsRequestsAndJobs(t *testing.T) {
	databaseURL := pgtest.NewDatabase(t)
	db := connect(t, databaseURL)
	model := newSlowModel(t)
	env := model.serverEnv(databaseURL)
	server := startServer(t, env)

	dana := apptest.NewUser(t, db)
	learnerIDs := map[string]string{}
	var exchanges []exchange
	for _, l := range lessons {
		learnerIDs[l.learner] = apptest.NewLearner(t, db, dana, l.learner)
		exchanges = append(exchanges, newExchange(conversation{who: dana, learnerID: learnerIDs[l.learner]},
			"drain-"+l.learner, l.question, "That is worth building on next time."))
	}

	// The posts wait for the model until the test releases it, however long
	// the test takes to get there, so their client allows more than
	// answerLimit.
	client := apptest.Client{URL: server.url, HTTP: &http.Client{Timeout: 30 * time.Second}}
	answers := make([]answer, len(exchanges))
	var posts sync.WaitGroup
	for i, x := range exchanges {
		posts.Go(func() { answers[i] = postExchange(t, client, x) })
	}
	// Should the test end early, the model answers and the posts end.
	t.Cleanup(func() {
		model.releaseSummaries()
		model.releaseExtractions()
		posts.Wait()
	})

	waitFor(t, 15*time.Second, "every post waiting for its summary and an extraction running", func() bool {
		summaries, extractions := model.inFlight()
		return summaries >= len(exchanges) && len(extractions) > 0
	})
	_, inProgress := model.inFlight()
	server.signal(t, syscall.SIGTERM)

	server.waitRefusing(t)
	if !server.running() {
		t.Fatalf("the server exited with posts and an extraction still waiting for the model: %v", server.cmd.ProcessState)
	}

	// The requests drain first: every post in flight gets its summary and
	// its answer.
	model.releaseSummaries()
	posts.Wait()
	for i, a := range answers {
		switch {
		case !a.acknowledged():
			t.Errorf("post in flight at SIGTERM (%s): %s", exchanges[i].turns[0].ID, a)
		case a.TurnsAdded != len(exchanges[i].turns) || a.Conversation.SummaryStale || a.Conversation.Summary != fakeSummary:
			t.Errorf("post in flight at SIGTERM (%s) did not finish its work: %s", exchanges[i].turns[0].ID, a)
		}
	}
	// Then the extraction in progress, which still waits for the model,
	// holds the process until it is done.
	if !server.running() {
		t.Fatalf("the server exited with an extraction still waiting for the model: %v", server.cmd.ProcessState)
	}
	model.releaseExtractions()
	if state := server.wait(t, 20*time.Second); state.ExitCode() != 0 {
		t.Fatalf("the server exited with %v after SIGTERM, want status 0", state)
	}

	for _, learner := range inProgress {
		if status := jobStatus(t, db, learnerIDs[learner]); status != "done" {
			t.Errorf("the extraction in progress at SIGTERM (learner %s) is %q, want done", learner, status)
		}
	}
	if n := apptest.Count(t, db, `select count(*) from public.memory_jobs where kind = 'extract' and status not in ('done', 'pending')`); n != 0 {
		t.Errorf("%d extraction jobs left neither done nor queued", n)
	}
	checkLearnt(t, db, learnerIDs, inProgress)
	checkStoredOnce(t, db, exchanges)
	queued := apptest.Count(t, db, `select count(*) from public.memory_jobs where kind = 'extract' and status = 'pending'`)
	t.Logf("at SIGTERM: %d posts and %d extraction in flight; %d extractions left queued", len(exchanges), len(inProgress), queued)

	// The next start learns from what was left queued.
	startServer(t, env)
	waitFor(t, 15*time.Second, "the restarted server to run the queued extractions", func() bool {
		return apptest.Count(t, db, `select count(*) from public.memory_jobs where kind = 'extract' and status <> 'done'`) == 0
	})
	var everyone []string
	for _, l := range lessons {
		everyone = append(everyone, l.learner)
	}
	checkLearnt(t, db, learnerIDs, everyone)
}

// jobStatus is the status of the one extraction job of a learner's
// conversation (each conversation of the test stores one exchange).
func jobStatus(t *testing.T, db *pgx.Conn, learnerID string) string {
	t.Helper()
	return apptest.Scalar[string](t, db, `select status from public.memory_jobs where learner_id = $1::uuid and kind = 'extract'`, learnerID)
}

// checkLearnt fails unless the memory the model found in each named
// learner's exchange is stored for that learner, exactly once.
func checkLearnt(t *testing.T, db *pgx.Conn, learnerIDs map[string]string, learners []string) {
	t.Helper()
	for _, l := range lessons {
		if !slices.Contains(learners, l.learner) {
			continue
		}
		if n := apptest.Count(t, db, `select count(*) from public.learner_memories
			where learner_id = $1::uuid and content = $2 and source = 'extracted'`,
			learnerIDs[l.learner], l.memory["content"]); n != 1 {
			t.Errorf("the memory learnt about %s is stored %d times, want once", l.learner, n)
		}
	}
}

// TestSecondSIGTERMStopsAtOnce: an operator who sends a second SIGTERM (or
// presses Ctrl-C twice) does not want to wait out the drain. The first
// signal starts it, with a post waiting for its summary; the second ends the
// process at once, and the post's turns, stored before the model was asked,
// are kept.
func TestSecondSIGTERMStopsAtOnce(t *testing.T) {
	databaseURL := pgtest.NewDatabase(t)
	db := connect(t, databaseURL)
	model := newSlowModel(t)
	server := startServer(t, model.serverEnv(databaseURL))
	dana := apptest.NewUser(t, db)
	x := newExchange(conversation{who: dana}, "twice", "Emma cried before school again today.", "Let us plan a calmer morning.")
	client := apptest.Client{URL: server.url, HTTP: &http.Client{Timeout: 30 * time.Second}}
	posted := make(chan answer, 1)
	go func() { posted <- postExchange(t, client, x) }()
	t.Cleanup(func() {
		model.releaseSummaries()
		<-posted
	})
	waitFor(t, 15*time.Second, "the post to wait for its summary", func() bool {
		summaries, _ := model.inFlight()
		return summaries > 0
	})

	server.signal(t, syscall.SIGTERM)
	server.waitRefusing(t)
	if !server.running() {
		t.Fatalf("the first SIGTERM did not wait for the post in flight: %v", server.cmd.ProcessState)
	}
	server.signal(t, syscall.SIGTERM)
	state := server.wait(t, 5*time.Second)
	if status, ok := state.Sys().(syscall.WaitStatus); !ok || !status.Signaled() || status.Signal() != syscall.SIGTERM {
		t.Fatalf("after the second SIGTERM the server ended with %v, want killed by SIGTERM", state)
	}
	checkStoredOnce(t, db, []exchange{x})
}
