package worker_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/extractor"
	"mentormemory/llm"
	"mentormemory/llm/llmtest"
	"mentormemory/mentor"
	"mentormemory/summarizer"
	"mentormemory/worker"
)

// What a parent typed about their family, which the model provider must
// never be sent: the learner's and another learner's names, an email
// address and a phone number.
const (
	plantedLearner = "Ottoline"
	plantedOther   = "Ignatius Brown"
	plantedEmail   = "dana.parent@example.com"
	plantedPhone   = "(555) 867-5309"
)

// placeholderIn matches the placeholders a prompt may hold.
var placeholderIn = regexp.MustCompile(`\[(?:LEARNER|(?:PERSON|EMAIL|PHONE|ADDRESS)_\d+)\]`)

// echoPlaceholders answers as a model that understood its prompt: it writes
// back the placeholders the user message gave it, in a memory (its content
// and its topic) when asked for memories, in a summary otherwise.
func echoPlaceholders(req llmtest.ChatRequest) http.HandlerFunc {
	var given []string
	for _, p := range placeholderIn.FindAllString(req.Last("user"), -1) {
		if !slices.Contains(given, p) {
			given = append(given, p)
		}
	}
	text := "Notes on " + strings.Join(given, ", ") + "."
	if req.ResponseFormat == nil {
		return llmtest.ReplyContent(text, "stop")
	}
	reply, _ := json.Marshal(map[string]any{"memories": []any{personalMemory(text, "friends: "+strings.Join(given, " "))}})
	return llmtest.ReplyContent(string(reply), "stop")
}

// Two exchanges go through the model summarizer and the extraction job, so
// that the second round's prompts also hold what the first round stored:
// the summary and a known memory. No request the model received, and no
// log line, holds a planted detail; the summary and the memories stored
// hold them all.
func TestTheModelIsSentPlaceholdersAndWhatIsStoredHasTheRealValues(t *testing.T) {
	e := newEnv(t, worker.Config{})
	learner := apptest.NewLearner(t, e.pool, e.facilitator, plantedLearner)
	apptest.NewLearner(t, e.pool, e.facilitator, plantedOther)
	model := llmtest.NewScriptedChat(t, func(_ int, req llmtest.ChatRequest) http.HandlerFunc { return echoPlaceholders(req) })
	logs := &apptest.Logs{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := llmtest.Config(model.URL, llm.Config{Timeout: 5 * time.Second, Logger: log})
	svc := mentor.NewService(e.store, summarizer.NewOpenAI(cfg), log)
	w := worker.New(e.store, worker.Config{Extractor: extractor.NewOpenAI(cfg)}, log)

	for _, exchange := range [][]mentor.Turn{
		apptest.Exchange("Ottoline fell out with Ignatius at recess. Write to me at "+plantedEmail+
			" or call "+plantedPhone+" if she is upset.", "I will keep an eye on Ottoline."),
		apptest.Exchange("Ignatius Brown said sorry to Ottoline today.", "That is good news."),
	} {
		result, err := svc.Update(e.ctx, &learner, exchange, false)
		if err != nil || result.SummaryErr != nil {
			t.Fatalf("update: %v, summary: %v", err, result.SummaryErr)
		}
		if ran, err := w.RunOnce(context.Background()); !ran || err != nil {
			t.Fatalf("the extraction job did not run: %v", err)
		}
	}

	calls := model.Calls()
	if len(calls) != 4 {
		t.Fatalf("the model was asked %d times, want 2 summaries and 2 extractions", len(calls))
	}
	planted := []string{plantedLearner, "Ignatius", "Brown", plantedEmail, "867-5309"}
	leaks := func(text string) []string {
		return slices.DeleteFunc(slices.Clone(planted), func(v string) bool { return !strings.Contains(text, v) })
	}
	for i, c := range calls {
		if leaked := leaks(c.Raw); len(leaked) > 0 {
			t.Errorf("request %d to the model holds %q:\n%s", i+1, leaked, c.Body.Last("user"))
		}
	}
	// The prompts are logged as sent, and at debug level only.
	logged := logs.String()
	if leaked := leaks(logged); len(leaked) > 0 || strings.Count(logged, `"msg":"model prompt"`) != len(calls) {
		t.Errorf("the logs hold %q, or not one masked prompt per request:\n%s", leaked, logged)
	}

	conv, err := svc.Get(e.ctx, &learner)
	if err != nil || conv == nil {
		t.Fatalf("conversation: %v %v", conv, err)
	}
	memories, err := svc.ListMemories(e.ctx, mentor.ListQuery{LearnerID: &learner})
	if err != nil || len(memories) == 0 {
		t.Fatalf("memories: %v %v", memories, err)
	}
	topic, _ := memories[0].Metadata[mentor.MetaTopic].(string)
	for _, text := range []string{conv.Summary, memories[0].Content, topic} {
		if placeholderIn.MatchString(text) {
			t.Errorf("a stored text still holds a placeholder: %q", text)
		}
	}
	for _, value := range []string{plantedLearner, plantedOther, plantedEmail, plantedPhone} {
		for _, text := range []string{conv.Summary, memories[0].Content} {
			if !strings.Contains(text, value) {
				t.Errorf("a stored text lacks %q: %q", value, text)
			}
		}
	}
	if want := "friends: " + strings.Join([]string{plantedLearner, plantedOther, plantedEmail, plantedPhone}, " "); topic != want {
		t.Errorf("the memory's topic is %q, want %q", topic, want)
	}
}
