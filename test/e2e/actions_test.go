package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/llm/llmtest"
	"mentormemory/postgres/pgtest"
)

// TestChatProposalWaitsForTheFacilitatorsClick: the model, asked in the
// chat, calls forget_memory; the reply shows the proposal under it with
// the memory's text, and nothing is forgotten. Cancel leaves the memory, in
// the panel and in the database; asked again, Confirm forgets it, and the
// panel and the database show it gone, its history saying it was done from
// the chat.
func TestChatProposalWaitsForTheFacilitatorsClick(t *testing.T) {
	chromiumPath(t)
	pgtest.URL(t)
	var forget atomic.Value // the id of the memory the model asks to forget
	model := llmtest.NewScriptedChat(t, func(_ int, req llmtest.ChatRequest) http.HandlerFunc {
		switch {
		case len(req.Tools) == 0:
			// Not the chat (an extraction of the exchange): nothing to learn.
			return llmtest.ReplyContent(`{"memories": []}`, "stop")
		case req.Messages[len(req.Messages)-1].Role == "tool":
			return llmtest.ReplyContent("I can forget that: confirm it under this reply if you want me to.", "stop")
		}
		return llmtest.ReplyToolCall("forget_memory", fmt.Sprintf(`{"memory_id":%q}`, forget.Load()))
	})
	svc := serve(t, apptest.Options{ModelURL: model.URL, Auth: config.Auth{DevMode: true, JWTSecret: secret}})
	const storms, horses = "Emma is scared of thunderstorms.", "Emma loves horses."
	stormsID := addMemory(t, svc, map[string]any{"type": "personal", "content": storms}).Object("memory")["id"].(string)
	addMemory(t, svc, map[string]any{"type": "personal", "content": horses})
	forget.Store(stormsID)

	b := startBrowser(t, "actions")
	signInAsDemo(b, svc.URL)
	pickLearner(b, "Emma")
	b.waitFor("Emma's memories", fmt.Sprintf(`knownItem(%q) && knownItem(%q)`, storms, horses))
	b.step("helpers for the proposals", chromedp.Evaluate[chromedp.Void](
		`window.proposals = () => [...document.querySelectorAll('#messages .msg.assistant .proposal')];`))
	ask := func(message string) {
		b.t.Helper()
		b.step("ask: "+message, chromedp.SendKeys(chromedp.ID("message"), message), pressEnter())
	}
	remembered := func(when string) {
		t.Helper()
		stored := storedMemories(t, svc.Pool, emmaID)
		if len(stored) != 2 || stored[0].content != storms {
			t.Fatalf("database %s: %+v, want both memories", when, stored)
		}
	}

	ask("Please forget that Emma is scared of thunderstorms.")
	b.waitFor("the proposal under the reply", fmt.Sprintf(`(() => {
		const [p] = proposals();
		return proposals().length === 1 && p.dataset.status === 'pending' &&
			p.querySelector('.proposal-title').textContent === 'Forget a memory' &&
			p.querySelector('.before').textContent === %q &&
			p.querySelector('button[data-verb=confirm]') && p.querySelector('button[data-verb=cancel]');
	})()`, storms))
	b.screenshot("proposed", false)
	remembered("after the proposal")

	b.step("cancel", chromedp.Click(chromedp.CSS(`#messages .proposal[data-status=pending] button[data-verb=cancel]`)))
	b.waitFor("the proposal cancelled, the memory kept", fmt.Sprintf(`(() => {
		const [p] = proposals();
		return p.dataset.status === 'cancelled' && !p.querySelector('button') && !p.querySelector('.proposal-expiry') &&
			p.querySelector('.proposal-status').textContent === 'Cancelled: nothing changed.' && knownItem(%q);
	})()`, storms))
	remembered("after Cancel")
	if status := apptest.Scalar[string](t, svc.Pool, `select status from public.pending_actions`); status != "cancelled" {
		t.Fatalf("the action is %s after Cancel, want cancelled", status)
	}

	ask("Yes, really: forget it.")
	b.waitFor("the second proposal", `proposals().length === 2 && proposals()[1].dataset.status === 'pending'`)
	remembered("after the second proposal")

	// A reload takes the reply's buttons with the page; the proposal still
	// waits, and is shown again with them.
	b.step("reload", chromedp.Reload())
	b.waitFor("the page back", `document.getElementById('workspace') && !document.getElementById('workspace').hidden`)
	addHelpers(b)
	b.waitFor("the proposal waiting again after the reload", fmt.Sprintf(`(() => {
		window.proposals = () => [...document.querySelectorAll('#messages .proposal')];
		const waiting = proposals().filter((p) => p.dataset.status === 'pending');
		return waiting.length === 1 && waiting[0].closest('.notice.proposed') &&
			waiting[0].querySelector('.before').textContent === %q && knownItem(%q);
	})()`, storms, storms))
	b.step("confirm", chromedp.Click(chromedp.CSS(`#messages .proposal[data-status=pending] button[data-verb=confirm]`)))
	b.waitFor("the memory forgotten, in the panel too", fmt.Sprintf(`(() => {
		const p = proposals().find((p) => p.closest('.notice.proposed'));
		return p.dataset.status === 'confirmed' && !p.querySelector('button') &&
			p.querySelector('.proposal-status').textContent === 'Done.' && !knownItem(%q) && knownItem(%q);
	})()`, storms, horses))
	b.screenshot("confirmed", true)
	if stored := storedMemories(t, svc.Pool, emmaID); len(stored) != 1 || stored[0].content != horses {
		t.Fatalf("database after Confirm: %+v, want only %q", stored, horses)
	}
	history := apptest.Column[string](t, svc.Pool, `select change || ' by ' || actor from public.memory_history
		where memory_id = $1::uuid order by id`, stormsID)
	if strings.Join(history, ", ") != "created by facilitator, forgotten by chat" {
		t.Fatalf("the forgotten memory's history: %q", history)
	}
	b.noConsoleProblems()
}
