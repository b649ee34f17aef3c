package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"mentormemory/app"
	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/llm/llmtest"
	"mentormemory/postgres/pgtest"
)

// The chat's browser tests: a reply shown as it is written and stopped, an
// exchange that could not be saved, and a conversation that comes back.

// cutOff ends a reply the facilitator stopped (chat.js's CUT_OFF).
const cutOff = " […]"

// release lets the model write its next piece, or fails the test when the
// model is not waiting for it.
func release(t *testing.T, next chan<- struct{}, what string) {
	t.Helper()
	select {
	case next <- struct{}{}:
	case <-time.After(stepLimit):
		t.Fatalf("the model was not waiting to write %s", what)
	}
}

// recordReplyRenders has the page note each text the newest reply shows
// while it is being written, in window.renders.
func recordReplyRenders(b *browser) {
	b.t.Helper()
	b.step("record the reply's renders", chromedp.Evaluate[chromedp.Void](`(() => {
		window.renders = [];
		new MutationObserver(() => {
			const item = [...document.querySelectorAll('#messages .msg.assistant')].pop();
			if (!item || !item.classList.contains('streaming')) return;
			const text = item.querySelector('.text').textContent;
			if (text && window.renders[window.renders.length - 1] !== text) window.renders.push(text);
		}).observe(document.getElementById('messages'), { subtree: true, childList: true, characterData: true });
	})()`))
}

// TestAReplyGrowsAsItIsWrittenAndStopKeepsWhatWasShown: the model looks
// back at earlier conversations, which the reply says while it waits, then
// writes its reply a piece at a time; the page shows each piece before
// the next is written, and the whole reply at the end, saying it looked
// back. A second reply is stopped: the model's call ends, and the
// exchange saved is what was shown, marked cut off. A model that fails
// gets plain words and a Try again that works.
func TestAReplyGrowsAsItIsWrittenAndStopKeepsWhatWasShown(t *testing.T) {
	chromiumPath(t)
	pgtest.URL(t)
	const (
		counting   = "How can Emma practise counting at home?"
		bedtime    = "What should we read at bedtime?"
		breaksOnce = "Any idea for a rainy afternoon?"
		thinking   = "Let me think about bedtime stories that"
	)
	pieces := []string{"Counting ", "with blocks ", "works well ", "for Emma."}
	next := make(chan struct{})
	stopped := make(chan struct{})
	var failedOnce atomic.Bool
	model := llmtest.NewScriptedChat(t, func(_ int, req llmtest.ChatRequest) http.HandlerFunc {
		switch {
		case len(req.Tools) == 0:
			// Not the chat (an extraction of the exchange): nothing to learn.
			return llmtest.ReplyContent(`{"memories": []}`, "stop")
		case req.Messages[len(req.Messages)-1].Role == "tool":
			return func(w http.ResponseWriter, r *http.Request) {
				stream := llmtest.StartStream(w)
				for _, piece := range pieces {
					select {
					case <-next:
					case <-r.Context().Done():
						return
					}
					stream.Text(piece)
				}
				<-next // the end, once the test has seen every piece
				stream.Finish("stop", nil)
			}
		case req.Last("user") == bedtime:
			return func(w http.ResponseWriter, r *http.Request) {
				stream := llmtest.StartStream(w)
				stream.Text(thinking)
				<-r.Context().Done() // until the chat hangs up
				close(stopped)
			}
		case req.Last("user") == breaksOnce && !failedOnce.Swap(true):
			// A 400: the model's client tries a 500 again by itself.
			return llmtest.ReplyError(http.StatusBadRequest, "the model refused the request")
		case req.Last("user") == breaksOnce:
			return llmtest.ReplyContent("Build a blanket fort and read inside it.", "stop")
		}
		return llmtest.ReplyToolCall("search_conversation_history", `{"search":"counting","include_archive":true}`)
	})
	svc := serve(t, apptest.Options{ModelURL: model.URL, Auth: config.Auth{DevMode: true, JWTSecret: secret}})
	// What Mr. Mentor knows of Emma's counting, which the first question
	// recalls: the reply says it used them, and lists them on a click.
	known := []string{"Emma enjoys counting with wooden blocks", "Emma loses focus counting past twenty"}
	for _, content := range known {
		addMemory(t, svc, map[string]any{"type": "academic", "content": content})
	}
	b := startBrowser(t, "stream")
	signInAsDemo(b, svc.URL)
	pickLearner(b, "Emma")
	b.waitFor("Emma's conversation", `document.getElementById('memory-scope').textContent.includes('Emma') &&
		!document.querySelector('#messages .notice.pending')`)
	recordReplyRenders(b)

	b.step("ask about counting", chromedp.SendKeys(chromedp.ID("message"), counting), pressEnter())
	b.waitFor("Mr. Mentor looking back, with Stop in place of Send", `(() => {
		const item = document.querySelector('#messages .msg.assistant.streaming');
		return item && item.querySelector('.activity').textContent === 'Looking back at earlier conversations…' &&
			document.getElementById('send').hidden && !document.getElementById('stop').hidden;
	})()`)
	b.screenshot("looking-back", false)
	var written string
	for i, piece := range pieces {
		release(t, next, fmt.Sprintf("piece %d", i+1))
		written += piece
		b.waitFor(fmt.Sprintf("piece %d on screen", i+1), fmt.Sprintf(`(() => {
			const item = document.querySelector('#messages .msg.assistant.streaming');
			return item && item.querySelector('.text').textContent.trim() === %q;
		})()`, strings.TrimSpace(written)))
		if i == 1 {
			b.screenshot("growing", false)
		}
	}
	release(t, next, "the end")
	reply := strings.TrimSpace(written)
	b.waitFor("the whole reply, saying it looked back", fmt.Sprintf(`(() => {
		const item = [...document.querySelectorAll('#messages .msg.assistant')].pop();
		return !item.classList.contains('streaming') && item.querySelector('.text').textContent === %q &&
			!item.querySelector('.activity') &&
			item.querySelector('.reply-detail.looked-back').textContent === 'Looked back at earlier conversations; nothing matched' &&
			item.querySelector('.reply-detail.used summary').textContent === 'Used 2 memories' &&
			!document.getElementById('send').hidden && !document.getElementById('send').disabled &&
			document.getElementById('stop').hidden;
	})()`, reply))
	b.screenshot("whole", false)
	b.text(`[...document.querySelectorAll('#messages .msg.assistant')].pop().querySelector('.reply-detail.used summary').click() || 'opened'`)
	b.waitFor("the memories the reply used", fmt.Sprintf(`(() => {
		const items = [...[...document.querySelectorAll('#messages .msg.assistant')].pop().querySelectorAll('.used-memories li')];
		return JSON.stringify(items.map((li) => li.textContent).sort()) === %q;
	})()`, mustJSON(t, known)))
	b.screenshot("used-memories", false)
	var renders []string
	if err := json.Unmarshal([]byte(b.text(`JSON.stringify(window.renders)`)), &renders); err != nil {
		t.Fatal(err)
	}
	if len(renders) < 3 {
		t.Fatalf("the reply was rendered %d times while it was written (%q), want at least 3", len(renders), renders)
	}
	for i, r := range renders {
		if !strings.HasPrefix(written, r) || (i > 0 && !strings.HasPrefix(r, renders[i-1])) {
			t.Fatalf("renders %q: each should be the reply so far", renders)
		}
	}

	// Stop: the reply keeps what was shown, marked cut off, and so does
	// the memory; the model's call ends.
	b.step("ask about bedtime", chromedp.SendKeys(chromedp.ID("message"), bedtime), pressEnter())
	b.waitFor("the reply's start, and Stop", fmt.Sprintf(`(() => {
		const item = document.querySelector('#messages .msg.assistant.streaming');
		return item && item.querySelector('.text').textContent === %q && !document.getElementById('stop').hidden;
	})()`, thinking))
	b.screenshot("before-stop", false)
	b.step("stop", chromedp.Click(chromedp.ID("stop")))
	select {
	case <-stopped:
	case <-time.After(stepLimit):
		t.Fatal("the model's call went on after Stop")
	}
	cut := thinking + cutOff
	b.waitFor("the reply cut off and saved", fmt.Sprintf(`(() => {
		const item = [...document.querySelectorAll('#messages .msg.assistant')].pop();
		return item.classList.contains('cut-off') && item.querySelector('.text').textContent === %q &&
			!item.querySelector('.save-state') && !document.getElementById('send').hidden &&
			document.getElementById('memory-turns').textContent === '4';
	})()`, cut))
	b.screenshot("stopped", false)
	turns := apptest.Column[string](t, svc.Pool, `select role || ': ' || content from public.conversation_turns
		where learner_id = $1 order by id`, emmaID)
	want := []string{"user: " + counting, "assistant: " + reply, "user: " + bedtime, "assistant: " + cut}
	if strings.Join(turns, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the memory holds\n%s\nwant\n%s", strings.Join(turns, "\n"), strings.Join(want, "\n"))
	}

	// A model that fails: plain words, the question kept, and Try again.
	b.step("ask while the model fails", chromedp.SendKeys(chromedp.ID("message"), breaksOnce), pressEnter())
	b.waitFor("the plain error and Try again", `(() => {
		const notice = [...document.querySelectorAll('#messages .notice.error')].pop();
		return notice && notice.textContent === 'Mr. Mentor couldn’t answer just now. Try again' &&
			notice.querySelector('button.retry') && document.querySelector('#messages .msg.user.failed') &&
			!document.getElementById('send').disabled;
	})()`)
	b.screenshot("model-failed", false)
	b.step("try again", chromedp.Click(chromedp.CSS("#messages .notice.error button.retry")))
	b.waitFor("the answer, the failure gone", `(() => {
		const item = [...document.querySelectorAll('#messages .msg.assistant')].pop();
		return item.querySelector('.text').textContent === 'Build a blanket fort and read inside it.' &&
			!document.querySelector('#messages .notice.error') && !document.querySelector('#messages .msg.user.failed') &&
			document.getElementById('message').value === '' && document.getElementById('memory-turns').textContent === '6';
	})()`)
	b.noConsoleProblems()
}

// saveGate stands in front of the app and can fail the chat's saves
// (POST /api/conversation-memory) the two ways a server going away does:
// refusing them (the server is down: the connection closes unanswered),
// or losing the answer (the server stored the turns, then the connection
// broke). Every other request passes.
type saveGate struct {
	URL  string
	mode atomic.Int32
}

const (
	gateOpen = iota
	gateRefuse
	gateLoseAnswer
)

func startGate(t *testing.T, target string) *saveGate {
	t.Helper()
	g := &saveGate{}
	g.URL = startProxy(t, target, func(proxy http.Handler, w http.ResponseWriter, r *http.Request) {
		save := r.Method == http.MethodPost && r.URL.Path == "/api/conversation-memory"
		switch mode := g.mode.Load(); {
		case save && mode == gateRefuse:
			hangUp(t, w)
		case save && mode == gateLoseAnswer:
			stored := httptest.NewRecorder()
			proxy.ServeHTTP(stored, r)
			if stored.Code != http.StatusOK {
				t.Errorf("the save the gate let through: %d %s", stored.Code, stored.Body)
			}
			hangUp(t, w)
		default:
			proxy.ServeHTTP(w, r)
		}
	})
	return g
}

// startProxy serves, until the test ends, each request by serve, which
// passes it on to target through proxy or answers it itself; it returns
// the proxy's URL.
func startProxy(t *testing.T, target string, serve func(proxy http.Handler, w http.ResponseWriter, r *http.Request)) string {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(to)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(proxy, w, r) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

// hangUp closes the connection without an answer.
func hangUp(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hang up: %v", err)
		return
	}
	conn.Close()
}

// TestAnExchangeThatCouldNotBeSavedIsKeptAndSavedOnce: with the server
// away after a reply, the reply says "Not saved · Retry"; the exchange
// waits in the browser's storage through a reload; once the server is
// back, Retry saves it. An exchange whose save was stored but whose answer
// was lost is sent again when the server answers the next message, and
// the memory holds every turn once.
func TestAnExchangeThatCouldNotBeSavedIsKeptAndSavedOnce(t *testing.T) {
	d := startDemoBehind(t, "unsaved")
	b := d.b
	pickLearner(b, "Emma")
	send := func(message string, replies int) {
		t.Helper()
		word := distinctiveWord(message)
		b.step("send: "+message, chromedp.SendKeys(chromedp.ID("message"), message), pressEnter())
		b.waitFor("the reply about "+word, fmt.Sprintf(`(() => {
			const replies = document.querySelectorAll('#messages .msg.assistant .text');
			return replies.length === %d && replies[%d].textContent.includes(%q) && !document.getElementById('send').disabled;
		})()`, replies, replies-1, word))
	}
	notSaved := func(replies int) string {
		return fmt.Sprintf(`(() => {
			const replies = [...document.querySelectorAll('#messages .msg.assistant')];
			const mark = replies[%d] && replies[%d].querySelector('.save-state');
			return replies.length === %d && mark && mark.textContent === 'Not saved · Retry' &&
				replies.slice(0, %d).every((r) => !r.querySelector('.save-state'));
		})()`, replies-1, replies-1, replies, replies-1)
	}
	send("Emma counted to twenty on her own today.", 1)
	b.waitFor("the first exchange saved", `document.getElementById('memory-turns').textContent === '2'`)

	// The server refuses the save: the reply says so.
	d.gate.mode.Store(gateRefuse)
	send("Tomorrow she starts swimming lessons.", 2)
	b.waitFor("Not saved · Retry", notSaved(2))
	b.screenshot("not-saved", false)

	// A reload keeps it, still waiting.
	b.step("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("workspace")))
	b.waitFor("Emma's conversation back, the exchange still not saved", fmt.Sprintf(`document.getElementById('learner').value === %q &&
		document.querySelectorAll('#messages .msg.user').length === 2 && %s`, emmaID, notSaved(2)))
	queued := b.text(fmt.Sprintf(`localStorage.getItem('mentor.outbox.%s.%s')`, app.DemoFacilitatorID, emmaID))
	if !strings.Contains(queued, "swimming lessons") {
		t.Fatalf("the browser's storage keeps %q, want the exchange about swimming", queued)
	}
	b.screenshot("not-saved-after-reload", false)

	// The server is back: Retry saves it. (The timer's own retry may come
	// first, in the moment between; the exchange is saved either way.)
	d.gate.mode.Store(gateOpen)
	if clicked := b.text(`(() => {
		const retry = document.querySelector('#messages .save-state button.retry');
		if (!retry) return 'no Retry button';
		retry.click();
		return 'clicked';
	})()`); clicked != "clicked" {
		t.Logf("Retry was not clicked (%s): the timer's retry came first", clicked)
	}
	b.waitFor("the exchange saved", `!document.querySelector('#messages .save-state') &&
		document.getElementById('memory-turns').textContent === '4'`)
	if left := b.text(fmt.Sprintf(`String(localStorage.getItem('mentor.outbox.%s.%s'))`, app.DemoFacilitatorID, emmaID)); left != "null" {
		t.Fatalf("the browser still keeps %s after the save", left)
	}

	// The server stores the next save but its answer is lost: the reply
	// says it is not saved, and the next message's answer sends it again.
	d.gate.mode.Store(gateLoseAnswer)
	send("She was scared of the deep end.", 3)
	b.waitFor("Not saved · Retry again", notSaved(3))
	d.gate.mode.Store(gateOpen)
	send("Any tips for her first lesson?", 4)
	b.waitFor("everything saved", `!document.querySelector('#messages .save-state') &&
		document.getElementById('memory-turns').textContent === '8'`)
	b.screenshot("all-saved", false)

	turns := apptest.Column[string](t, d.svc.Pool, `select content from public.conversation_turns
		where learner_id = $1 and role = 'user' order by id`, emmaID)
	want := "Emma counted to twenty on her own today.|Tomorrow she starts swimming lessons.|She was scared of the deep end.|Any tips for her first lesson?"
	if strings.Join(turns, "|") != want {
		t.Fatalf("the memory holds the questions %q, want each once, in order: %q", turns, want)
	}
	if n := d.svc.Count(t, `select count(*) from public.conversation_turns where learner_id = $1`, emmaID); n != 8 {
		t.Fatalf("the memory holds %d turns, want 8", n)
	}
	if ids := d.svc.Count(t, `select count(distinct client_turn_id) from public.conversation_turns where learner_id = $1`, emmaID); ids != 8 {
		t.Fatalf("%d distinct client turn ids, want 8", ids)
	}
	b.noConsoleProblems("/api/conversation-memory")
}

// behindGate is the demo served through a saveGate.
type behindGate struct {
	demo
	gate *saveGate
}

// startDemoBehind starts the model, the app, a gate in front of it and a
// browser signed in through the gate.
func startDemoBehind(t *testing.T, prefix string) behindGate {
	t.Helper()
	chromiumPath(t)
	pgtest.URL(t)
	d := behindGate{demo: demo{model: startModel(t, "")}}
	d.svc = serve(t, apptest.Options{ModelURL: d.model.URL, Auth: config.Auth{DevMode: true, JWTSecret: secret}})
	d.gate = startGate(t, d.svc.URL)
	d.b = startBrowser(t, prefix)
	signInAsDemo(d.b, d.gate.URL)
	return d
}

// TestTheConversationComesBackWithItsLearnerAndItsOpening: a long pasted
// message is shown folded until opened; after a reload the conversation
// and the learner are back, and the next message continues it, filed
// under the learner. Once the session has ended, the conversation comes
// back (after a reload, or switching learner and back) with the opening
// the server prepared.
func TestTheConversationComesBackWithItsLearnerAndItsOpening(t *testing.T) {
	d := startDemo(t, "restore", "Next time we'll try the number line.")
	b := d.b
	pickLearner(b, "Emma")
	b.waitFor("the new conversation", `[...document.querySelectorAll('#messages .notice')].some((n) =>
		n.textContent === 'A new conversation about Emma. Mr. Mentor remembers your earlier ones.')`)

	// A pasted school report: folded, and opened on demand.
	report := "School report, spring term. " + strings.Repeat("Emma takes part willingly in group work and listens to others. ", 50)
	b.step("paste a school report", setField("message", report), pressEnter())
	b.waitFor("the report's reply", `document.querySelectorAll('#messages .msg.assistant .text').length === 1 &&
		!document.getElementById('send').disabled`)
	folded := `(() => {
		const item = document.querySelector('#messages .msg.user');
		const toggle = item.querySelector('.fold-toggle');
		return item.classList.contains('folded') && item.querySelector('.text').getBoundingClientRect().height < 200 &&
			toggle.textContent === 'Show all' && toggle.getAttribute('aria-expanded') === 'false';
	})()`
	b.waitFor("the report folded", folded)
	b.step("narrow the viewport", chromedp.EmulateViewport(375, 812))
	b.waitFor("the report still folded on a phone", folded)
	b.screenshot("folded-375", false)
	b.step("show all", chromedp.Click(chromedp.CSS("#messages .msg.user .fold-toggle")))
	b.waitFor("the report open", `(() => {
		const item = document.querySelector('#messages .msg.user');
		const toggle = item.querySelector('.fold-toggle');
		return !item.classList.contains('folded') && item.querySelector('.text').getBoundingClientRect().height > 600 &&
			toggle.textContent === 'Show less' && toggle.getAttribute('aria-expanded') === 'true';
	})()`)
	b.step("wide again", chromedp.EmulateViewport(1280, 900))
	b.step("ask", chromedp.SendKeys(chromedp.ID("message"), "How do I praise her listening?"), pressEnter())
	b.waitFor("both exchanges saved", `document.querySelectorAll('#messages .msg.assistant').length === 2 &&
		document.getElementById('memory-turns').textContent === '4'`)
	shown := `[...document.querySelectorAll('#messages .msg')].map((m) => m.querySelector('.who').textContent + ': ' +
		m.querySelector('.text').textContent).join('\n')`
	before := b.text(shown)

	// Reload mid-conversation: the same conversation, about Emma.
	b.step("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("workspace")))
	b.waitFor("the conversation and the learner back", fmt.Sprintf(`document.getElementById('learner').value === %q &&
		document.getElementById('memory-scope').textContent.includes('Emma') &&
		document.querySelectorAll('#messages .msg').length === 4 && !document.querySelector('#messages .notice')`, emmaID))
	if after := b.text(shown); after != before {
		t.Fatalf("after the reload the chat shows\n%s\nwant\n%s", after, before)
	}
	b.screenshot("reloaded", false)
	b.step("go on", chromedp.SendKeys(chromedp.ID("message"), "She also loves puzzles."), pressEnter())
	b.waitFor("the third exchange saved", `document.getElementById('memory-turns').textContent === '6'`)
	if n := len(lastChat(t, d.model).Messages); n != 1+4+1 {
		t.Fatalf("the message after the reload was sent with %d messages, want system + the 4 turns restored + 1", n)
	}
	if general := d.svc.Count(t, `select count(*) from public.conversation_turns where learner_id is null`); general != 0 {
		t.Fatalf("%d turns were filed under the general conversation", general)
	}

	// The session ends: the conversation comes back with the opening.
	b.step("end the session", chromedp.Click(chromedp.ID("end-session")))
	b.waitFor("the goodbye", `document.querySelector('#messages .notice.closing') && !document.getElementById('end-session').disabled`)
	res := d.svc.Call(t, demoToken(t), http.MethodGet, "/api/opening-context?learner_id="+emmaID, nil).WantStatus(http.StatusOK)
	opening := res.Object("opening")
	opener, _ := opening["suggested_opener"].(string)
	hook, _ := opening["welcome_hook"].(string)
	if opener == "" || hook == "" {
		t.Fatalf("no opening to show: %s", res.Raw)
	}
	withOpening := fmt.Sprintf(`(() => {
		const items = [...document.querySelectorAll('#messages > li')];
		const opening = items[items.length - 1];
		return document.getElementById('learner').value === %q && items[0].textContent === 'Your last conversation about Emma' &&
			items.filter((i) => i.matches('.msg.user, .msg.assistant')).length === 6 &&
			opening.matches('.msg.opening') && opening.querySelector('.text').textContent === %q &&
			[...opening.querySelectorAll('.opening-notes li')].some((li) => li.textContent === %q);
	})()`, emmaID, opener, hook)
	b.step("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("workspace")))
	b.waitFor("the opening after the conversation", withOpening)
	b.screenshot("opening", false)
	pickLearner(b, "General")
	b.waitFor("the general conversation", `document.getElementById('learner').value === '' &&
		[...document.querySelectorAll('#messages .notice')].some((n) => n.textContent === 'A new general conversation. Mr. Mentor remembers your earlier ones.')`)
	pickLearner(b, "Emma")
	b.waitFor("Emma's conversation and opening again", withOpening)
	b.step("narrow the viewport", chromedp.EmulateViewport(375, 812))
	b.step("show the opening", chromedp.Evaluate[chromedp.Void](`scrollTo(0, document.documentElement.scrollHeight)`))
	b.screenshot("opening-375", false)

	// The next message opens a new session: no history goes with it.
	b.step("start the new session", chromedp.SendKeys(chromedp.ID("message"), "We tried the number line!"), pressEnter())
	b.waitFor("the reply", `document.getElementById('memory-turns').textContent === '8'`)
	if n := len(lastChat(t, d.model).Messages); n != 2 {
		t.Fatalf("the new session's first message was sent with %d messages, want system + itself", n)
	}
	b.noConsoleProblems()
}

// lastChat is the latest request of the chat to the model (not of an
// extraction, which offers no tools).
func lastChat(t *testing.T, model *llmtest.Server[llmtest.ChatRequest]) llmtest.ChatRequest {
	t.Helper()
	calls := model.Calls()
	for i := len(calls) - 1; i >= 0; i-- {
		if len(calls[i].Body.Tools) > 0 {
			return calls[i].Body
		}
	}
	t.Fatal("the chat never called the model")
	return llmtest.ChatRequest{}
}

// mustJSON is v as JSON, for a check in the page.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	encoded, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(encoded)
}
