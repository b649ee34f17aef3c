package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/llm"
	"mentormemory/llm/llmtest"
	"mentormemory/summarizer"
)

// memoryText stands for what a facilitator told the mentor; a failing
// model may quote it back.
const memoryText = "Emma was diagnosed with dyslexia"

// A model's error body or refusal quoting the turns reaches neither the
// log nor the client: the log says how the model failed, by status or kind.
func TestModelTextNeverReachesTheLog(t *testing.T) {
	quoting := llmtest.NewScriptedChat(t, func(n int, _ llmtest.ChatRequest) http.HandlerFunc {
		if n == 1 {
			return func(w http.ResponseWriter, _ *http.Request) {
				llmtest.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
					"message": "Cannot answer about: " + memoryText, "type": "invalid_request_error", "code": memoryText}})
			}
		}
		return llmtest.Reply(map[string]any{"role": "assistant", "content": nil, "refusal": "I won't discuss that " + memoryText}, "stop")
	})
	logs := &apptest.Logs{}
	svc := apptest.Start(t, apptest.Options{ModelURL: quoting.URL, Logs: logs,
		Summarizer: summarizer.NewOpenAI(llmtest.Config(quoting.URL, llm.Config{Timeout: 5 * time.Second}))})
	u := svc.NewUser(t)
	emma := svc.NewLearner(t, u, "Emma")

	// The counselor: an error body, then a refusal.
	for _, kind := range []string{"model API status 400 type invalid_request_error", "refusal"} {
		res := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": memoryText, "learner_id": emma})
		res.WantError(http.StatusBadGateway, "The mentor model failed; please try again")
		logs.WaitFor(t, "The mentor model failed; please try again: "+kind)
	}
	// The summarizer: a refusal.
	res := svc.PostTurns(t, u, emma, apptest.Exchange(memoryText, "Thank you for telling me.")...).WantStatus(http.StatusOK)
	if res.Object("conversation_update")["summary_stale"] != true {
		t.Fatalf("the refused summary should be stale: %s", res.Raw)
	}
	logged := logs.WaitFor(t, "The summary model failed: refusal")
	if strings.Contains(logged, "dyslexia") {
		t.Fatalf("the model's text was logged:\n%s", logged)
	}
}
