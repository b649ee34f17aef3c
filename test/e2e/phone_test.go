package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/llm/llmtest"
	"mentormemory/postgres/pgtest"
)

// The replies of the phone test's model: Markdown with markup that must
// stay text, and a reply far taller than a phone's screen.
const (
	markdownReply = "**Make it physical.** Try this tonight:\n\n- Use *blocks* for the tens\n- Count `ones` aloud\n\n" +
		"1. Build the number\n2. Say it\n\n" +
		"Pasted markup stays text: <img src=x onerror=alert(1)> and [not a link](javascript:alert(1)), " +
		"while [a guide](https://example.com/guide) is a link."
	longReplyStart = "START OF THE LONG REPLY."
)

func longReply() string {
	var b strings.Builder
	b.WriteString(longReplyStart)
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "\n\nStep %d: keep it short and calm, one small thing at a time, and praise the effort more than the answer.", i)
	}
	return b.String()
}

// startPhoneModel answers "markdown" with markdownReply, "long" with
// longReply, and anything else as startModel does.
func startPhoneModel(t *testing.T) *llmtest.Server[llmtest.ChatRequest] {
	return llmtest.NewScriptedChat(t, func(_ int, req llmtest.ChatRequest) http.HandlerFunc {
		last := req.Last("user")
		switch {
		case strings.Contains(last, "markdown please"):
			return llmtest.ReplyContent(markdownReply, "stop")
		case strings.Contains(last, "long answer please"):
			return llmtest.ReplyContent(longReply(), "stop")
		}
		return llmtest.ReplyContent(fmt.Sprintf("Thank you for telling me about %s.", distinctiveWord(last)), "stop")
	})
}

// phone makes the tab a phone's: 375 × 812 CSS pixels and a touch screen,
// so that (pointer: coarse) matches.
func phone() chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
}

// showView taps one of the phone's tabs.
func showView(b *browser, tab string) {
	b.t.Helper()
	b.step("show "+tab, chromedp.Click(chromedp.ID(tab)))
	b.waitFor(tab+" selected", fmt.Sprintf(`document.getElementById(%q).getAttribute('aria-selected') === 'true'`, tab))
}

// smallTargets lists the visible controls smaller than 44 × 44 px: buttons,
// summaries, fields, selects, tabs, and the labels of checkboxes (a
// checkbox is tapped through its label).
const smallTargets = `(() => {
	const visible = (e) => {
		const r = e.getBoundingClientRect();
		return r.width > 0 && r.height > 0 && r.right > 0 && getComputedStyle(e).visibility !== 'hidden' && e.closest('.visually-hidden') === null;
	};
	const controls = [...document.querySelectorAll('button, summary, select, textarea, input:not([type=checkbox]):not([type=radio]), [role=tab]')];
	const checkboxes = [...document.querySelectorAll('input[type=checkbox]')].map((box) => box.closest('label') || box);
	return [...controls, ...checkboxes].filter(visible).map((e) => {
		const r = e.getBoundingClientRect();
		return r.height < 44 || r.width < 44
			? (e.id ? '#' + e.id : e.tagName.toLowerCase()) + ' "' + (e.getAttribute('aria-label') || e.textContent).trim().slice(0, 40) + '" ' +
				Math.round(r.width) + 'x' + Math.round(r.height)
			: '';
	}).filter(Boolean).join('; ');
})()`

// scrollAreas lists the elements on screen that scroll inside the page
// (the message box and code blocks aside).
const scrollAreas = `(() => [...document.querySelectorAll('body *')].filter((e) => {
	if (e.tagName === 'TEXTAREA' || e.tagName === 'PRE' || e.getClientRects().length === 0) return false;
	const s = getComputedStyle(e);
	return /(auto|scroll)/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 1;
}).map((e) => e.id || e.className).join(', '))()`

// TestPhoneShowsOneThingAtATime walks the page on a phone (375 × 812, a
// touch screen): the tabs Chat, What he knows and Search show one thing at
// a time; the message box and Send stay on screen; the mentor's Markdown is
// rendered, its markup kept as text; a long reply is shown from its start;
// no part of the page scrolls inside another; every control is at least
// 44 × 44 px, each memory's buttons name their memory, and the Shift+Enter
// hint is not shown. Screenshots of the three views are kept. At 1280 ×
// 800 everything sits side by side again.
func TestPhoneShowsOneThingAtATime(t *testing.T) {
	chromiumPath(t)
	pgtest.URL(t)
	model := startPhoneModel(t)
	svc := serve(t, apptest.Options{ModelURL: model.URL, Auth: config.Auth{DevMode: true, JWTSecret: secret}})
	addMemory(t, svc, map[string]any{"type": "personal", "content": "Emma loves dinosaurs, especially the long-necked ones."})
	addMemory(t, svc, map[string]any{"type": "academic", "content": "Emma counts in tens with blocks."})
	b := startBrowser(t, "phone")
	b.step("become a phone", phone())
	signInAsDemo(b, svc.URL)
	if small := b.text(smallTargets); small != "" {
		t.Errorf("controls under 44 px on the sign-in page: %s", small)
	}
	pickLearner(b, "Emma")

	// The chat alone, its composer on screen, without the Shift+Enter hint.
	b.waitFor("the chat alone", `(() => {
		const shown = (id) => document.getElementById(id).getClientRects().length > 0;
		return shown('chat-panel') && !shown('memory') && !shown('search-panel') &&
			document.getElementById('tab-chat').getAttribute('aria-selected') === 'true';
	})()`)
	if coarse := b.text(`String(matchMedia('(pointer: coarse)').matches)`); coarse != "true" {
		t.Fatalf("the phone's touch screen is not seen: (pointer: coarse) is %s", coarse)
	}
	composerOnScreen := `(() => {
		const send = document.getElementById('send').getBoundingClientRect();
		const box = document.getElementById('message').getBoundingClientRect();
		return send.top >= 0 && send.bottom <= innerHeight && box.top >= 0 && box.bottom <= innerHeight;
	})()`
	b.waitFor("the composer on screen, no Shift+Enter hint", composerOnScreen+` &&
		document.getElementById('message-help').getClientRects().length === 0 &&
		!document.getElementById('message').hasAttribute('aria-describedby')`)

	// On a touch screen Enter is a new line, and only Send sends.
	b.step("press Enter on the phone's keyboard", setField("message", "First line"), chromedp.Focus(chromedp.ID("message")), pressEnter())
	if sent := b.text(`String(document.querySelectorAll('#messages .msg.user').length)`); sent != "0" {
		t.Fatalf("Enter on a touch screen sent the message (%s messages of the facilitator's shown)", sent)
	}
	b.step("clear the message box", setField("message", ""))

	// Markdown renders; markup in it stays text.
	b.step("watch for alerts", chromedp.Evaluate[chromedp.Void](`window.alerted = 0; window.alert = () => { window.alerted++; };`))
	b.step("ask for markdown", setField("message", "markdown please"), chromedp.Click(chromedp.ID("send")))
	b.waitFor("the rendered reply", `(() => {
		const reply = document.querySelector('#messages .msg.assistant .text');
		return reply && reply.querySelector('strong')?.textContent === 'Make it physical.' &&
			reply.querySelectorAll('ul > li').length === 2 && reply.querySelector('ul em')?.textContent === 'blocks' &&
			reply.querySelector('ul code')?.textContent === 'ones' && reply.querySelectorAll('ol > li').length === 2;
	})()`)
	if got := b.text(`(() => {
		const reply = document.querySelector('#messages .msg.assistant .text');
		const links = [...reply.querySelectorAll('a')].map((a) => a.href + ' ' + a.rel).join(' | ');
		return [document.querySelectorAll('#messages img').length, window.alerted, reply.textContent.includes('<img src=x onerror=alert(1)>'),
			reply.textContent.includes('not a link (javascript:alert(1))'), links].join(' / ');
	})()`); got != "0 / 0 / true / true / https://example.com/guide noopener noreferrer" {
		t.Fatalf("the reply's markup: %s; want no image, no alert, the markup as text, one safe link", got)
	}

	// A long reply is shown from its start, the composer still on screen.
	b.step("ask for a long answer", setField("message", "long answer please"), chromedp.Click(chromedp.ID("send")))
	b.waitFor("the long reply, from its start", fmt.Sprintf(`(() => {
		const replies = document.querySelectorAll('#messages .msg.assistant');
		const reply = replies[replies.length - 1];
		if (replies.length !== 2 || !reply.textContent.includes(%q)) return false;
		const top = reply.getBoundingClientRect().top, tabs = document.getElementById('views').getBoundingClientRect().bottom;
		return top >= tabs - 1 && top <= tabs + 40;
	})()`, longReplyStart))
	b.waitFor("the composer still on screen", composerOnScreen)
	if areas := b.text(scrollAreas); areas != "" {
		t.Errorf("parts of the chat scroll inside the page: %s", areas)
	}
	if small := b.text(smallTargets); small != "" {
		t.Errorf("controls under 44 px in the chat: %s", small)
	}
	b.screenshot("chat-375", false)

	// What he knows: the memories alone, each button naming its memory.
	showView(b, "tab-knows")
	b.waitFor("the memories alone", `(() => {
		const shown = (id) => document.getElementById(id).getClientRects().length > 0;
		return shown('memory') && !shown('chat-panel') && !shown('search-panel') && knownItems().length === 2;
	})()`)
	if names := b.text(`[...document.querySelectorAll('#knowledge-list [data-action=correct], #knowledge-list [data-action=forget]')]
		.map((b) => b.getAttribute('aria-label')).join(' | ')`); names != "Correct: Emma counts in tens with blocks. | Forget: Emma counts in tens with blocks. | "+
		"Correct: Emma loves dinosaurs, especially the… | Forget: Emma loves dinosaurs, especially the…" {
		t.Errorf("the memories' buttons are named %q, want each to name its memory", names)
	}
	b.step("open the add form", chromedp.Click(chromedp.CSS("#remember-box summary")), chromedp.WaitVisible(chromedp.ID("remember-text")))
	if small := b.text(smallTargets); small != "" {
		t.Errorf("controls under 44 px in What he knows: %s", small)
	}
	if areas := b.text(scrollAreas); areas != "" {
		t.Errorf("parts of What he knows scroll inside the page: %s", areas)
	}
	b.step("back to the top", chromedp.Evaluate[chromedp.Void](`scrollTo(0, 0)`))
	b.screenshot("knows-375", false)

	// Search: results alone.
	showView(b, "tab-search")
	b.step("search", setField("search-q", "physical"), chromedp.Click(chromedp.CSS("#search-form button[type=submit]")))
	b.waitFor("a result, alone on screen", `(() => {
		const shown = (id) => document.getElementById(id).getClientRects().length > 0;
		return shown('search-panel') && !shown('chat-panel') && !shown('memory') &&
			document.querySelector('#results .result .match mark');
	})()`)
	if small := b.text(smallTargets); small != "" {
		t.Errorf("controls under 44 px in Search: %s", small)
	}
	b.screenshot("search-375", false)

	// Back to the chat: the conversation is still there.
	showView(b, "tab-chat")
	b.waitFor("the chat again", `document.querySelectorAll('#messages .msg.assistant').length === 2 && `+composerOnScreen)

	// A desktop: side by side, no tabs, Send on screen.
	b.step("become a desktop", chromedp.EmulateViewport(1280, 800), chromedp.Evaluate[chromedp.Void](`scrollTo(0, 0)`))
	b.waitFor("everything side by side", `(() => {
		const box = (id) => document.getElementById(id).getBoundingClientRect();
		const chat = box('chat-panel'), memory = box('memory'), search = box('search-panel');
		return document.getElementById('views').getClientRects().length === 0 &&
			memory.left >= chat.right && search.left >= chat.right && search.top >= memory.bottom &&
			box('send').bottom <= innerHeight && document.documentElement.scrollWidth <= 1280;
	})()`)
	b.screenshot("desktop-1280", false)
	b.noConsoleProblems()
}
