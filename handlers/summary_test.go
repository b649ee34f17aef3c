package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/llm"
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
	model := &scriptedModel{respond: func(int, map[string]any) (int, any) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return http.StatusInternalServerError, map[string]any{"error": map[string]any{"message": "model overloaded"}}
		}
		return http.StatusOK, textReply(reply)
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	e := newEnv(t, apptest.Options{Summarizer: summarizer.NewOpenAI(llm.Config{
		APIKey: "test-key", BaseURL: srv.URL, Model: "test-model", Timeout: 2 * time.Second,
	})})
	u := e.newUser()

	setReply("Summary one: fractions with pizza slices.", false)
	res := e.post(u, "", exchange("Emma struggles with fractions.", "Use pizza slices.")...).wantStatus(http.StatusOK)
	if conversation(res)["summary"] != "Summary one: fractions with pizza slices." || res.body["summarizer"] != "openai" {
		t.Fatalf("first summary not stored: %s", res.raw)
	}
	first := model.lastPrompt(t)
	if !strings.Contains(first, "Emma struggles with fractions.") {
		t.Fatalf("full prompt lacks the turns: %s", first)
	}

	// Incremental: previous summary plus only the new turns.
	setReply("Summary two: fractions and spelling.", false)
	e.post(u, "", exchange("Spelling tests are next week.", "Practise five words a night.")...).wantStatus(http.StatusOK)
	second := model.lastPrompt(t)
	if !strings.Contains(second, "Summary one: fractions with pizza slices.") ||
		!strings.Contains(second, "Spelling tests are next week.") ||
		strings.Contains(second, "Emma struggles with fractions.") {
		t.Fatalf("incremental prompt should hold the previous summary and only the new turns: %s", second)
	}

	// The model fails: the turns are kept and the summary is marked stale.
	setReply("", true)
	res = e.post(u, "", exchange("She likes the library on Saturdays.", "Make it a reading ritual.")...).wantStatus(http.StatusOK)
	conv := conversation(res)
	if conv["summary_stale"] != true || conv["summary"] != "Summary two: fractions and spelling." || number(conv["turn_count"]) != 6 {
		t.Fatalf("failure should keep turns and mark the summary stale: %s", res.raw)
	}
	if !strings.Contains(res.body["message"].(string), "summary could not be updated") {
		t.Fatalf("the client should be told: %s", res.raw)
	}

	// The next update catches up on the turns the failed call missed.
	setReply("Summary three: fractions, spelling, library.", false)
	res = e.post(u, "", exchange("Bedtime is 8:15 now.", "Keep it consistent.")...).wantStatus(http.StatusOK)
	caughtUp := model.lastPrompt(t)
	if !strings.Contains(caughtUp, "She likes the library on Saturdays.") || !strings.Contains(caughtUp, "Bedtime is 8:15 now.") {
		t.Fatalf("catch-up prompt should hold the turns the failed call missed: %s", caughtUp)
	}
	if conv := conversation(res); conv["summary_stale"] != false || conv["summary"] != "Summary three: fractions, spelling, library." {
		t.Fatalf("summary should be fresh again: %s", res.raw)
	}

	// force_regenerate rewrites from the whole active segment.
	setReply("Fresh summary.", false)
	e.call(u.token, http.MethodPost, "/api/conversation-memory", map[string]any{
		"conversation_turns": exchange("Bedtime is 8:15 now.", "Keep it consistent."), "force_regenerate": true,
	}).wantStatus(http.StatusOK)
	full := model.lastPrompt(t)
	if !strings.Contains(full, "Emma struggles with fractions.") || strings.Contains(full, "Summary three") {
		t.Fatalf("regeneration should use every active turn and no previous summary: %s", full)
	}
}
