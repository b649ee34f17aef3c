package worker_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"mentormemory/consolidator"
	"mentormemory/llm"
	"mentormemory/mentor"
	"mentormemory/worker"
)

// withModelConsolidator has e's worker plan consolidations with the fake
// model, whose replies e.reply scripts.
func (e *env) withModelConsolidator() {
	e.worker = worker.New(e.store, worker.Config{
		Consolidator: consolidator.NewOpenAI(llm.Config{APIKey: "test", BaseURL: e.model.URL, Model: "plan-model", Timeout: 5 * time.Second}),
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// A model sees a contradiction no rule would (no negation in it), is shown
// the memories masked and by key and the last sessions' summaries, and its plan is applied by id; the run
// records the model and the tokens it cost.
func TestModelConsolidationPlansWhatRulesCannot(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.withModelConsolidator()
	hates := e.remember(mentor.Preference, "Alex hates fractions", nil, time.Now().AddDate(0, 0, -3))
	loves := e.remember(mentor.Preference, "Alex now loves fractions since the pizza game", nil, time.Now())
	e.post("Alex asked for the pizza game again", "Next time Alex can invent one.")
	e.endSession()
	e.exec(`update memory_jobs set run_after = now() where kind = 'consolidate'`)
	e.reply = func(int) (int, string) {
		return http.StatusOK, `{"merges": [], "supersessions": [{"old": "m1", "new": "m2"}], "expiries": [], "resolutions": []}`
	}
	if _, err := e.svc.Consolidate(e.ctx, *e.alex); err != nil {
		t.Fatal(err)
	}
	if ran, err := e.worker.RunConsolidationOnce(context.Background()); !ran || err != nil {
		t.Fatalf("the run did not run: %v", err)
	}
	if e.statusOf(hates) != mentor.StatusSuperseded || e.statusOf(loves) != mentor.StatusCurrent {
		t.Fatal("the model's supersession was not applied")
	}
	prompt := e.model.Calls()[0].Body.First("user")
	if strings.Contains(prompt, "Alex") || !strings.Contains(prompt, "m1 [preference") || !strings.Contains(prompt, "[LEARNER] hates fractions") {
		t.Fatalf("the model was not shown the memories masked and by key:\n%s", prompt)
	}
	if !strings.Contains(prompt, "The last sessions, latest first:\n- ") || !strings.Contains(prompt, "Left for next time: Next time [LEARNER] can invent one.") {
		t.Fatalf("the model was not shown the last session's summary, masked:\n%s", prompt)
	}
	r := e.consolidations()[0]
	if r.Status != "done" || r.Consolidator == nil || *r.Consolidator != "plan-model" || r.ModelTokens != 20 || r.Changes["superseded"] != 1 {
		t.Fatalf("the run as recorded: %+v", r)
	}
}

// A plan the model gets wrong (a memory it was never shown, or one memory
// in two changes) is never applied: the run is retried, and after three
// attempts recorded as failed, with a reason that quotes nothing the model
// wrote.
func TestMalformedModelPlanIsRetriedThenRecordedAsFailed(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.withModelConsolidator()
	first := e.remember(mentor.Personal, "Alex has a dog named Max", nil, time.Now())
	e.remember(mentor.Personal, "Alex walks the dog after school", nil, time.Now())
	replies := []string{
		`{"merges": [], "supersessions": [{"old": "m1", "new": "Alex's secret diary"}], "expiries": [], "resolutions": []}`,
		`{"merges": [], "supersessions": [], "expiries": [{"memory": "m1", "reason": "old"}], "resolutions": [{"memory": "m1", "by": "m2"}]}`,
		`not json at all`,
	}
	e.reply = func(n int) (int, string) { return http.StatusOK, replies[(n-1)%len(replies)] }
	if _, err := e.svc.Consolidate(e.ctx, *e.alex); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 3; attempt++ {
		if ran, err := e.worker.RunConsolidationOnce(context.Background()); !ran || err != nil {
			t.Fatalf("attempt %d did not run: %v", attempt, err)
		}
		r := e.consolidations()[0]
		want := "queued"
		if attempt == 3 {
			want = "failed"
		}
		if r.Status != want || r.Error == nil {
			t.Fatalf("after attempt %d: %+v, want %s with its reason", attempt, r, want)
		}
		if strings.Contains(*r.Error, "diary") {
			t.Fatalf("the run's error quotes the model: %s", *r.Error)
		}
		e.exec(`update memory_jobs set run_after = now() where kind = 'consolidate'`)
	}
	if e.statusOf(first) != mentor.StatusCurrent || e.count(`select count(*) from memory_history where actor = 'consolidation'`) != 0 {
		t.Fatal("a refused plan changed the memories")
	}
	if n := e.count(`select count(*) from memory_jobs where kind = 'consolidate' and status = 'failed'`); n != 1 {
		t.Fatalf("%d consolidation jobs failed for good, want 1", n)
	}
	if ran, _ := e.worker.RunConsolidationOnce(context.Background()); ran {
		t.Fatal("a failed run ran again")
	}
}
