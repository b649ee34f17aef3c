package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/llm/llmtest"
)

// Asked for a stream, the counselor sends the tool it runs, then the reply
// a piece at a time while the model is still writing it, then the whole
// reply with its metadata, with headers that keep proxies from holding it
// back.
func TestTheCounselorStreamsItsReplyAsTheModelWritesIt(t *testing.T) {
	firstPieceArrived := make(chan struct{})
	heldBack := make(chan bool, 1)
	model := llmtest.NewScriptedChat(t, func(n int, _ llmtest.ChatRequest) http.HandlerFunc {
		if n == 1 {
			return llmtest.ReplyToolCall("search_conversation_history", `{"search":"counting","include_archive":true}`)
		}
		return func(w http.ResponseWriter, r *http.Request) {
			stream := llmtest.StartStream(w)
			stream.Text("Try")
			// The rest is written only once the client has the first
			// piece: a reply held back anywhere on the way never gets it.
			select {
			case <-firstPieceArrived:
				heldBack <- false
			case <-time.After(10 * time.Second):
				heldBack <- true
			}
			for _, piece := range llmtest.Words(" counting with blocks today.") {
				stream.Text(piece)
			}
			stream.Finish("stop", map[string]any{"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100})
		}
	})
	logs := &apptest.Logs{}
	svc, u, learner := apptest.StartWithLearner(t, apptest.Options{ModelURL: model.URL, Logs: logs}, "Emma")
	// The one conversation the model's search finds.
	svc.PostTurns(t, u, learner, apptest.Exchange("Emma is counting to ten with her fingers.", "Try counting steps on the stairs.")...).
		WantStatus(http.StatusOK)

	stream := svc.Stream(t, u.Token, "/api/counselor", map[string]any{"message": "How can Emma practise counting?", "learner_id": learner})
	if stream.Status != http.StatusOK {
		t.Fatalf("status %d: %s", stream.Status, stream.Refusal.Raw)
	}
	for header, want := range map[string]string{
		"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no",
	} {
		if got := stream.Header.Get(header); got != want {
			t.Errorf("%s = %q, want %q", header, got, want)
		}
	}
	var events []apptest.Event
	for {
		ev, err := stream.Next()
		if err != nil {
			t.Fatalf("after %d events: %v", len(events), err)
		}
		events = append(events, ev)
		if ev.Name == "text" && len(events) > 0 && ev.Data["text"] == "Try" {
			close(firstPieceArrived)
		}
		if ev.Name == "reply" || ev.Name == "error" {
			break
		}
	}
	stream.Close()
	if <-heldBack {
		t.Errorf("the first piece of the reply did not reach the client while the model was still writing")
	}

	var names []string
	var shown strings.Builder
	for _, ev := range events {
		names = append(names, ev.Name)
		if ev.Name == "text" {
			shown.WriteString(ev.Data["text"].(string))
		}
	}
	want := []string{"tool", "text", "text", "text", "text", "text", "reply"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", names, want)
	}
	if events[0].Data["name"] != "search_conversation_history" {
		t.Errorf("tool event %s, want the tool's name", events[0].Raw)
	}
	if strings.Contains(events[0].Raw, "counting") {
		t.Errorf("tool event %s carries the call's data; only its name may leave", events[0].Raw)
	}
	final := events[len(events)-1].Data
	if final["reply"] != "Try counting with blocks today." || shown.String() != final["reply"] {
		t.Errorf("reply %q, pieces shown %q; want both the model's whole text", final["reply"], shown.String())
	}
	calls, _ := final["tool_calls"].([]any)
	if len(calls) != 1 || calls[0].(map[string]any)["name"] != "search_conversation_history" || calls[0].(map[string]any)["found"] != float64(1) {
		t.Errorf("the reply's tool_calls %v, want the one search, saying it found the one conversation", final["tool_calls"])
	}
	if final["retrieval"] == nil {
		t.Errorf("the reply event carries no retrieval metadata: %v", final)
	}
	// Each model call is logged with its tokens, time and outcome, the
	// streamed one once its stream has ended.
	logs.WaitFor(t, `"msg":"model call","purpose":"counselor","path":"/chat/completions","status":200,`)
	logs.WaitFor(t, `"tokens":100,"outcome":"answered"`)
}

// A client that hangs up mid-reply stops the model's call: its request to
// the model is cancelled, and the model's server sees it go.
func TestAClientThatHangsUpCancelsTheModelsCall(t *testing.T) {
	cancelled := make(chan struct{})
	logs := &apptest.Logs{}
	model := llmtest.NewChat(t, func(w http.ResponseWriter, r *http.Request) {
		stream := llmtest.StartStream(w)
		stream.Text("Let me think")
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(30 * time.Second):
		}
	})
	svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL, Logs: logs})

	stream := svc.Stream(t, u.Token, "/api/counselor", map[string]any{"message": "What should we read tonight?"})
	if ev, err := stream.Next(); err != nil || ev.Name != "text" {
		t.Fatalf("first event %v, %v; want the reply's first piece", ev, err)
	}
	stream.Close()
	select {
	case <-cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("the model's call went on after the client hung up")
	}
	logs.WaitFor(t, `"purpose":"counselor","path":"/chat/completions","status":200,`)
	logs.WaitFor(t, `"tokens":0,"outcome":"cancelled"`)
}

// A model that fails after the stream has begun ends it with an error
// event saying what the JSON answer would have said; a request refused
// before it begins gets the JSON error and its status, stream or not.
func TestAStreamEndsWithTheErrorTheJSONAnswerWouldHaveGiven(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyError(http.StatusInternalServerError, "overloaded"))
	svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL})

	events := svc.Stream(t, u.Token, "/api/counselor", map[string]any{"message": "Any ideas for fractions?"}).All()
	if len(events) != 1 || events[0].Name != "error" {
		t.Fatalf("events %v, want one error event", events)
	}
	if got := events[0].Data; got["status"] != float64(http.StatusBadGateway) || got["error"] != "The mentor model failed; please try again" {
		t.Errorf("error event %s, want the 502 the JSON answer gives", events[0].Raw)
	}

	refused := svc.Stream(t, u.Token, "/api/counselor", map[string]any{"message": "  "})
	refused.Refusal.WantError(http.StatusBadRequest, "Message required")
}
