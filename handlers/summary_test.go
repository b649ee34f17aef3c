package handlers_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/llm"
	"mentormemory/llm/llmtest"
	"mentormemory/summarizer"
)

func TestModelSummariesAreIncrementalAndSurviveFailures(t *testing.T) {
	// The scripted model answers with the summary set by setReply, or fails.
	var mu sync.Mutex
	reply, fail := "", false
	setReply := func(r string, f bool) {
		mu.Lock()
		defer mu.Unlock()
		reply, fail = r, f
	}
	model := llmtest.NewScriptedChat(t, func(int, llmtest.ChatRequest) http.HandlerFunc {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return llmtest.ReplyError(http.StatusInternalServerError, "model overloaded")
		}
		return llmtest.ReplyContent(reply, "stop")
	})
	svc := apptest.Start(t, apptest.Options{Summarizer: summarizer.NewOpenAI(llm.Config{
		APIKey: "test-key", BaseURL: model.URL, Model: "test-model", Timeout: 2 * time.Second,
	})})
	u := svc.NewUser(t)

	setReply("Summary one: fractions with pizza slices.", false)
	res := svc.PostTurns(t, u, "", apptest.Exchange("Emma struggles with fractions.", "Use pizza slices.")...).WantStatus(http.StatusOK)
	if res.Object("conversation_update")["summary"] != "Summary one: fractions with pizza slices." || res.Body["summarizer"] != "openai" {
		t.Fatalf("first summary not stored: %s", res.Raw)
	}
	first := model.Last(t).Prompt()
	if !strings.Contains(first, "Emma struggles with fractions.") {
		t.Fatalf("full prompt lacks the turns: %s", first)
	}

	// Incremental: previous summary plus only the new turns.
	setReply("Summary two: fractions and spelling.", false)
	svc.PostTurns(t, u, "", apptest.Exchange("Spelling tests are next week.", "Practise five words a night.")...).WantStatus(http.StatusOK)
	second := model.Last(t).Prompt()
	if !strings.Contains(second, "Summary one: fractions with pizza slices.") ||
		!strings.Contains(second, "Spelling tests are next week.") ||
		strings.Contains(second, "Emma struggles with fractions.") {
		t.Fatalf("incremental prompt should hold the previous summary and only the new turns: %s", second)
	}

	// The model fails: the turns are kept and the summary is marked stale.
	setReply("", true)
	res = svc.PostTurns(t, u, "", apptest.Exchange("She likes the library on Saturdays.", "Make it a reading ritual.")...).WantStatus(http.StatusOK)
	conv := res.Object("conversation_update")
	if conv["summary_stale"] != true || conv["summary"] != "Summary two: fractions and spelling." || number(conv["turn_count"]) != 6 {
		t.Fatalf("failure should keep turns and mark the summary stale: %s", res.Raw)
	}
	if !strings.Contains(res.Body["message"].(string), "summary could not be updated") {
		t.Fatalf("the client should be told: %s", res.Raw)
	}

	// The next update catches up on the turns the failed call missed.
	setReply("Summary three: fractions, spelling, library.", false)
	res = svc.PostTurns(t, u, "", apptest.Exchange("Bedtime is 8:15 now.", "Keep it consistent.")...).WantStatus(http.StatusOK)
	caughtUp := model.Last(t).Prompt()
	if !strings.Contains(caughtUp, "She likes the library on Saturdays.") || !strings.Contains(caughtUp, "Bedtime is 8:15 now.") {
		t.Fatalf("catch-up prompt should hold the turns the failed call missed: %s", caughtUp)
	}
	if conv := res.Object("conversation_update"); conv["summary_stale"] != false || conv["summary"] != "Summary three: fractions, spelling, library." {
		t.Fatalf("summary should be fresh again: %s", res.Raw)
	}

	// force_regenerate rewrites from the whole active segment.
	setReply("Fresh summary.", false)
	svc.Call(t, u.Token, http.MethodPost, "/api/conversation-memory", map[string]any{
		"conversation_turns": apptest.Exchange("Bedtime is 8:15 now.", "Keep it consistent."), "force_regenerate": true,
	}).WantStatus(http.StatusOK)
	full := model.Last(t).Prompt()
	if !strings.Contains(full, "Emma struggles with fractions.") || strings.Contains(full, "Summary three") {
		t.Fatalf("regeneration should use every active turn and no previous summary: %s", full)
	}
}
