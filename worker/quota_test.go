package worker_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/extractor"
	"mentormemory/llm"
	"mentormemory/mentor"
	"mentormemory/worker"
)

// An extraction the day's model budget refuses is neither failed nor sent:
// the job waits, its attempt unspent, until the budget's window ends, and
// then learns from its exchange like any other.
func TestExtractionWaitsForTheModelBudget(t *testing.T) {
	e := newEnv(t, worker.Config{})
	budget := mentor.NewModelBudget(e.store, mentor.Limits{ModelCallsPerDay: 1})
	e.worker = worker.New(e.store, worker.Config{MaxAttempts: 1, Extractor: extractor.NewOpenAI(
		llm.Config{APIKey: "test", BaseURL: e.model.URL, Timeout: 5 * time.Second, Budget: budget},
	)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	e.reply = func(int) (int, string) { return 200, memoriesReply("Alex has a dog named Max") }
	e.post("gotta go feed my dog Max", "Say hi to Max!")
	e.post("Max chewed my homework", "Oh no, Max!")

	e.runOnce()
	e.runOnce()
	if n := len(e.model.Calls()); n != 1 {
		t.Fatalf("the model was asked %d times on a budget of one call", n)
	}
	var attempts int
	var wait time.Duration
	if err := e.pool.QueryRow(t.Context(), `select attempts, extract(epoch from run_after - now())::float8 * interval '1 second'
		from memory_jobs where status = 'pending'`).Scan(&attempts, &wait); err != nil {
		t.Fatalf("the refused job is not pending: %v", err)
	}
	if attempts != 0 || wait <= 0 || wait > 24*time.Hour {
		t.Fatalf("the refused job: %d attempts spent, runs in %v; want none spent, at the end of the day", attempts, wait)
	}
	if e.runOnce() {
		t.Fatal("the job ran again before the budget's window ended")
	}

	// The day ends.
	facilitator, _ := mentor.CallerFrom(e.ctx)
	apptest.EndWindow(t, e.pool, facilitator.UserID, mentor.ModelCalls)
	e.exec(`update memory_jobs set run_after = now() where status = 'pending'`)
	if !e.runOnce() {
		t.Fatal("the waiting job did not run")
	}
	if n := e.count(`select count(*) from memory_jobs where status = 'done' and attempts = 1`); n != 2 {
		t.Fatalf("%d jobs done with one attempt each, want both", n)
	}
}
