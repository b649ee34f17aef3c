package worker_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"mentormemory/closing"
	"mentormemory/extractor"
	"mentormemory/llm"
	"mentormemory/llm/llmtest"
	"mentormemory/worker"
)

// withClosingModel has e's store queue, and e's worker run, the writing of
// sessions' closing words by a fake model of their own, which answers its
// nth request (from 1) as reply says.
func (e *env) withClosingModel(reply func(n int) http.HandlerFunc) *llmtest.Server[llmtest.ChatRequest] {
	model := llmtest.NewScriptedChat(e.t, func(n int, _ llmtest.ChatRequest) http.HandlerFunc { return reply(n) })
	e.store.WithClosingWords()
	e.worker = worker.New(e.store, worker.Config{
		Extractor:     extractor.NewOpenAI(llm.Config{APIKey: "test", BaseURL: e.model.URL, Timeout: 5 * time.Second}),
		ClosingWriter: closing.NewOpenAI(llm.Config{APIKey: "test", BaseURL: model.URL, Timeout: 5 * time.Second}),
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return model
}

func closingWords(goodbye, summary string) http.HandlerFunc {
	content, _ := json.Marshal(map[string]string{"goodbye": goodbye, "summary": summary})
	return llmtest.ReplyContent(string(content), "stop")
}

// runClosings makes the queued writings due and runs them all; it returns
// how many ran.
func (e *env) runClosings() int {
	e.t.Helper()
	e.exec(`update memory_jobs set run_after = now() where kind = 'end_session' and status = 'pending'`)
	ran := 0
	for {
		done, err := e.worker.RunClosingOnce(context.Background())
		if err != nil {
			e.t.Fatal(err)
		}
		if !done {
			return ran
		}
		ran++
	}
}

func (e *env) sessionSummary() string {
	e.t.Helper()
	var summary string
	if err := e.pool.QueryRow(context.Background(), `select coalesce(summary, '') from mentor_sessions`).Scan(&summary); err != nil {
		e.t.Fatal(err)
	}
	return summary
}

// With a model, the goodbye line is written in the background from the
// session as it stands, what was learnt included, so that ending answers
// with it at once; the summary is written once the session has ended. A
// session that moved on before its writing ran asks the model nothing.
func TestTheModelWritesTheGoodbyeAndTheSummaryInTheBackground(t *testing.T) {
	e := newEnv(t, worker.Config{})
	model := e.withClosingModel(func(n int) http.HandlerFunc {
		if n == 1 {
			return closingWords("A real step forward for [LEARNER] today; next time, remainders.", "")
		}
		return closingWords("Thank you, see you soon.", "[LEARNER] solved long division alone; the dog Max came up. Next: remainders.")
	})
	e.reply = func(int) (int, string) { return http.StatusOK, memoriesReply("Alex has a dog named Max") }
	e.post("Alex solved the long division on his own!", "Brilliant. Next time we'll try remainders.")
	if n := e.count(`select count(*) from memory_jobs where kind = 'end_session' and run_after > now()`); n != 1 {
		t.Fatalf("%d writings queued to settle after the exchange, want 1", n)
	}
	// The exchange's extraction lands first and queues a writing that
	// knows what was learnt; the exchange's own is moot.
	e.runOnce()
	if ran := e.runClosings(); ran != 2 || len(model.Calls()) != 1 {
		t.Fatalf("%d writings ran, the model was asked %d times; want 2 and 1", ran, len(model.Calls()))
	}
	prompt := model.Calls()[0].Body.Last("user")
	if !strings.Contains(prompt, "- [LEARNER] solved the long division on his own!") || !strings.Contains(prompt, "- [LEARNER] has a dog named Max") {
		t.Fatalf("the model was not shown the session as it stands, masked:\n%s", prompt)
	}

	ended, err := e.svc.EndSession(e.ctx, e.alex)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Closing.GoodbyeLine != "A real step forward for Alex today; next time, remainders." {
		t.Fatalf("the end said %q, want the model's goodbye", ended.Closing.GoodbyeLine)
	}
	template := e.sessionSummary()
	if !strings.Contains(template, "Breakthrough: Alex solved the long division on his own!") {
		t.Fatalf("until the model writes it, the summary is the template's: %q", template)
	}
	if ran := e.runClosings(); ran != 1 || len(model.Calls()) != 2 {
		t.Fatalf("%d writings ran after the end, the model asked %d times in all; want 1 and 2", ran, len(model.Calls()))
	}
	day, _, _ := strings.Cut(template, ".")
	if got, want := e.sessionSummary(), day+". Alex solved long division alone; the dog Max came up. Next: remainders."; got != want {
		t.Fatalf("summary %q, want %q", got, want)
	}
}

// A model that fails, or writes what cannot be used (a refusal, a summary
// past its bound), costs nothing but its own words: posts and the end go on
// as ever, and the templates stay.
func TestAFailingClosingModelLeavesTheTemplates(t *testing.T) {
	e := newEnv(t, worker.Config{})
	model := e.withClosingModel(func(n int) http.HandlerFunc {
		if n <= 2 { // the first writing, and its one retry
			return llmtest.ReplyError(http.StatusInternalServerError, "overloaded")
		}
		return closingWords("I'm sorry, but I can't help with that.", strings.Repeat("Too long. ", 200))
	})
	e.post("Alex solved the long division on his own!", "Brilliant. Next time we'll try remainders.")
	if ran := e.runClosings(); ran != 1 {
		t.Fatalf("%d writings ran, want 1", ran)
	}
	if n := e.count(`select count(*) from memory_jobs where kind = 'end_session' and status = 'failed' and last_error <> ''`); n != 1 {
		t.Fatal("the failed writing is not recorded as failed, with its reason")
	}
	e.post("And he wants to show you tomorrow.", "Lovely, next time he can show me.")
	ended, err := e.svc.EndSession(e.ctx, e.alex)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ended.Closing.GoodbyeLine, "Great session today with Alex: it ended on a high.") {
		t.Fatalf("goodbye %q, want the template's", ended.Closing.GoodbyeLine)
	}
	template := e.sessionSummary()
	e.runClosings()
	if len(model.Calls()) < 3 {
		t.Fatalf("the model was asked %d times, want the end's writing too", len(model.Calls()))
	}
	if got := e.sessionSummary(); got != template {
		t.Fatalf("an unusable summary replaced the template: %q", got)
	}
	var goodbye string
	if err := e.pool.QueryRow(context.Background(), `select closing->>'goodbye_line' from mentor_sessions`).Scan(&goodbye); err != nil || goodbye != ended.Closing.GoodbyeLine {
		t.Fatalf("a refusal replaced the goodbye: %q (%v)", goodbye, err)
	}
}

// With learning off for a learner, no model reads their sessions in the
// background: no writing is queued, and the templates are the words.
func TestNoClosingWordsAreWrittenWithLearningOff(t *testing.T) {
	e := newEnv(t, worker.Config{})
	model := e.withClosingModel(func(int) http.HandlerFunc { return closingWords("Bye.", "A session.") })
	e.setLearning(false)
	e.post("Alex solved the long division on his own!", "Brilliant.")
	e.endSession()
	if ran := e.runClosings(); ran != 0 || len(model.Calls()) != 0 {
		t.Fatalf("%d writings ran, the model was asked %d times; want none", ran, len(model.Calls()))
	}
}
