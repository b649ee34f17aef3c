package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"mentormemory/apptest"
	"mentormemory/summarizer"
)

// fakeModel is an OpenAI-compatible chat completions server that records
// the prompts it gets and answers with a scripted summary or an error.
type fakeModel struct {
	mu      sync.Mutex
	prompts []string
	reply   string
	fail    bool
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.prompts = append(m.prompts, string(body))
	fail, reply := m.fail, m.reply
	m.mu.Unlock()
	if fail {
		http.Error(w, `{"error":{"message":"model overloaded"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": time.Now().Unix(), "model": "test-model",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": reply}}},
	})
}

func (m *fakeModel) set(reply string, fail bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reply, m.fail = reply, fail
}

func (m *fakeModel) lastPrompt(t *testing.T) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.prompts) == 0 {
		t.Fatal("the model was never called")
	}
	return m.prompts[len(m.prompts)-1]
}

func TestModelSummariesAreIncrementalAndSurviveFailures(t *testing.T) {
	model := &fakeModel{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	e := newEnv(t, apptest.Options{Summarizer: summarizer.NewOpenAI(summarizer.OpenAIConfig{
		APIKey: "test-key", BaseURL: srv.URL, Model: "test-model", Timeout: 2 * time.Second,
	})})
	u := e.newUser()

	model.set("Summary one: fractions with pizza slices.", false)
	res := e.post(u, "", exchange("Emma struggles with fractions.", "Use pizza slices.")...).wantStatus(http.StatusOK)
	if conversation(res)["summary"] != "Summary one: fractions with pizza slices." || res.body["summarizer"] != "openai" {
		t.Fatalf("first summary not stored: %s", res.raw)
	}
	first := model.lastPrompt(t)
	if !strings.Contains(first, "Emma struggles with fractions.") {
		t.Fatalf("full prompt lacks the turns: %s", first)
	}

	// Incremental: previous summary plus only the new turns.
	model.set("Summary two: fractions and spelling.", false)
	e.post(u, "", exchange("Spelling tests are next week.", "Practise five words a night.")...).wantStatus(http.StatusOK)
	second := model.lastPrompt(t)
	if !strings.Contains(second, "Summary one: fractions with pizza slices.") ||
		!strings.Contains(second, "Spelling tests are next week.") ||
		strings.Contains(second, "Emma struggles with fractions.") {
		t.Fatalf("incremental prompt should hold the previous summary and only the new turns: %s", second)
	}

	// The model fails: the turns are kept and the summary is marked stale.
	model.set("", true)
	res = e.post(u, "", exchange("She likes the library on Saturdays.", "Make it a reading ritual.")...).wantStatus(http.StatusOK)
	conv := conversation(res)
	if conv["summary_stale"] != true || conv["summary"] != "Summary two: fractions and spelling." || number(conv["turn_count"]) != 6 {
		t.Fatalf("failure should keep turns and mark the summary stale: %s", res.raw)
	}
	if !strings.Contains(res.body["message"].(string), "summary could not be updated") {
		t.Fatalf("the client should be told: %s", res.raw)
	}

	// The next update catches up on the turns the failed call missed.
	model.set("Summary three: fractions, spelling, library.", false)
	res = e.post(u, "", exchange("Bedtime is 8:15 now.", "Keep it consistent.")...).wantStatus(http.StatusOK)
	caughtUp := model.lastPrompt(t)
	if !strings.Contains(caughtUp, "She likes the library on Saturdays.") || !strings.Contains(caughtUp, "Bedtime is 8:15 now.") {
		t.Fatalf("catch-up prompt should hold the turns the failed call missed: %s", caughtUp)
	}
	if conv := conversation(res); conv["summary_stale"] != false || conv["summary"] != "Summary three: fractions, spelling, library." {
		t.Fatalf("summary should be fresh again: %s", res.raw)
	}

	// force_regenerate rewrites from the whole active segment.
	model.set("Fresh summary.", false)
	e.call(u.token, http.MethodPost, "/api/conversation-memory", map[string]any{
		"conversation_turns": exchange("Bedtime is 8:15 now.", "Keep it consistent."), "force_regenerate": true,
	}).wantStatus(http.StatusOK)
	full := model.lastPrompt(t)
	if !strings.Contains(full, "Emma struggles with fractions.") || strings.Contains(full, "Summary three") {
		t.Fatalf("regeneration should use every active turn and no previous summary: %s", full)
	}
}
