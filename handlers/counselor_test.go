package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/counselor"
	"mentormemory/llm"
	"mentormemory/llm/llmtest"
	"mentormemory/mentor"
	"mentormemory/summarizer"
)

// manyToolCalls answers a chat completion with n parallel calls of one
// tool, with ids call_0 to call_{n-1}.
func manyToolCalls(n int, name, arguments string) http.HandlerFunc {
	calls := make([]map[string]any, n)
	for i := range calls {
		calls[i] = map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": name, "arguments": arguments}}
	}
	return llmtest.Reply(map[string]any{"role": "assistant", "content": nil, "refusal": nil, "tool_calls": calls}, "tool_calls")
}

// A model asking for 100 searches at once gets 8 run, an error for each of
// the others, and a next request of bounded size, although every search
// result here holds about 200 KB of turns.
func TestCounselorBoundsToolCallsAndTheirResults(t *testing.T) {
	model := llmtest.NewScriptedChat(t, func(n int, _ llmtest.ChatRequest) http.HandlerFunc {
		if n == 1 {
			return manyToolCalls(100, "search_conversation_history", `{"search":"reading bedtime","include_archive":true}`)
		}
		return llmtest.ReplyContent("Keep bedtime reading short and fun.", "stop")
	})
	svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL})
	long := strings.Repeat("Max is reading slowly at bedtime and sighs at every page. ", 330)
	for _, name := range []string{"", "Max", "Emma", "Ada", "Leo", "Mia"} {
		learner := ""
		if name != "" {
			learner = svc.NewLearner(t, u, name)
		}
		svc.PostTurns(t, u, learner, apptest.Exchange(long, long)...).WantStatus(http.StatusOK)
	}

	res := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "How is bedtime reading going?"}).
		WantStatus(http.StatusOK)

	asked := model.Calls()
	if len(asked) != 2 {
		t.Fatalf("model asked %d times, want 2", len(asked))
	}
	next := asked[1]
	if limit := counselor.MaxToolResultsBytes + 64<<10; next.Size > limit {
		t.Errorf("the request after the tool calls is %d bytes, want at most %d", next.Size, limit)
	}
	answered := map[string]string{}
	for _, m := range next.Body.Messages {
		if m.Role == "tool" {
			if _, twice := answered[m.ToolCallID]; twice {
				t.Errorf("%s answered twice", m.ToolCallID)
			}
			answered[m.ToolCallID] = m.Content
		}
	}
	if len(answered) != 100 {
		t.Fatalf("%d tool calls answered, want every one of the 100", len(answered))
	}
	ran := 0
	for i := range 100 {
		content := answered[fmt.Sprintf("call_%d", i)]
		if !json.Valid([]byte(content)) {
			t.Fatalf("call_%d's result is not valid JSON: %.200s", i, content)
		}
		if i >= counselor.MaxToolCallsPerRound {
			if !strings.Contains(content, "at most 8 tool calls are run at once") {
				t.Errorf("call_%d should not run and say why: %.200s", i, content)
			}
			continue
		}
		if strings.Contains(content, `"success":true`) {
			ran++
			if len(content) > counselor.MaxToolResultBytes {
				t.Errorf("call_%d's result is %d bytes, over the bound of one result", i, len(content))
			}
		}
	}
	if ran == 0 {
		t.Fatal("no search ran")
	}
	capped := map[string]int{}
	for _, call := range res.Body["tool_calls"].([]any) {
		capped[fmt.Sprint(call.(map[string]any)["capped"])]++
	}
	if capped["not run: too many calls at once"] != 92 || capped["result shortened"] == 0 {
		t.Errorf("the reply should say which calls were capped and how: %v", capped)
	}
}

// A model too slow for the chat's deadline costs the client a 502 JSON
// error when the deadline passes, even when each of its calls is quicker
// than the timeout of one call.
func TestCounselorAnswers502WhenItsDeadlinePasses(t *testing.T) {
	const deadline = time.Second
	cases := []struct {
		name  string
		delay time.Duration // per model call
	}{
		{"one call slower than the deadline", 5 * time.Second},
		{"calls that each fit but not together", 400 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			model := llmtest.NewChat(t, func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(tc.delay):
				}
				llmtest.ReplyToolCall("get_conversation_memory", `{"learner_id":null}`)(w, r)
			})
			svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL, CounselorDeadline: deadline})
			start := time.Now()
			svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi"}).
				WantError(http.StatusBadGateway, "The mentor model took too long to answer; please try again")
			if took := time.Since(start); took < deadline || took > deadline+time.Second {
				t.Errorf("answered after %v, want just after the %v deadline", took, deadline)
			}
		})
	}
}

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

// A message as long as the chat allows (a pasted school report) is
// answered, with memory: recall reads its start and the words of the rest,
// and the model gets the whole message.
func TestCounselorAnswersAMessageAsLongAsTheChatAllows(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Thank you for sharing the report.", "stop"))
	svc, u, emma := apptest.StartWithLearner(t, apptest.Options{ModelURL: model.URL}, "Emma")
	svc.AddMemory(t, u, emma, map[string]any{"type": "academic", "content": "Emma is learning to swim in the deep end"})
	const end = " She is anxious about swimming lessons."
	report := strings.Repeat("Emma read aloud with expression and the teacher was pleased. ", 400)[:mentor.MaxTurnChars-len(end)] + end
	res := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": report, "learner_id": emma}).
		WantStatus(http.StatusOK)
	if res.Body["without_memory"] != nil || res.Body["reply"] != "Thank you for sharing the report." {
		t.Fatalf("the answer: %s", res.Raw)
	}
	call := model.Calls()[0].Body
	if call.Last("user") != report || !strings.Contains(call.First("system"), "Emma is learning to swim in the deep end") {
		t.Fatal("the model should get the whole message and the memory the end of the report recalls")
	}
}

// Memory that cannot be read (its table held by another transaction past
// the lock timeout) costs the reply its memory, not the reply: the answer
// says so, and the model is asked without memory.
func TestCounselorAnswersWithoutMemoryWhenItCannotBeRead(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Let's take it step by step.", "stop"))
	svc, u, emma := apptest.StartWithLearner(t, apptest.Options{ModelURL: model.URL}, "Emma")
	svc.AddMemory(t, u, emma, map[string]any{"type": "academic", "content": "Emma mixes up thirds and quarters"})

	ctx := context.Background()
	hold, err := svc.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(ctx)
	if _, err := hold.Exec(ctx, `lock table public.learner_memories in access exclusive mode`); err != nil {
		t.Fatal(err)
	}
	res := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Emma and fractions?", "learner_id": emma}).
		WantStatus(http.StatusOK)
	retrieval := res.Object("retrieval")
	if res.Body["reply"] != "Let's take it step by step." || res.Body["without_memory"] == nil || retrieval["mode"] != mentor.RetrievalNone {
		t.Fatalf("the answer without memory: %s", res.Raw)
	}
	if system := model.Calls()[0].Body.First("system"); strings.Contains(system, "thirds and quarters") {
		t.Fatalf("the model was given memory that could not be read:\n%s", system)
	}
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// Readable again: the reply has its memory.
	again := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Emma and fractions?", "learner_id": emma}).
		WantStatus(http.StatusOK)
	if again.Body["without_memory"] != nil || !strings.Contains(model.Calls()[1].Body.First("system"), "thirds and quarters") {
		t.Fatalf("the answer once memory is readable: %s", again.Raw)
	}
}
