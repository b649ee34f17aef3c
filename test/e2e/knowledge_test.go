package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app"
	"mentormemory/app/apptest"
)

type storedMemory struct {
	id, kind, content, source string
	mentions                  int
}

// storedMemories reads a learner's memories from the database, oldest first.
func storedMemories(t *testing.T, pool *pgxpool.Pool, learnerID string) []storedMemory {
	t.Helper()
	rows, err := pool.Query(context.Background(), `select id::text, type, content, source, mentions
		from public.learner_memories where learner_id = $1 order by created_at, id`, learnerID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []storedMemory
	for rows.Next() {
		var m storedMemory
		if err := rows.Scan(&m.id, &m.kind, &m.content, &m.source, &m.mentions); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// listMemories reads a learner's memories through the API, as the demo
// facilitator.
func listMemories(t *testing.T, svc *apptest.Service, learnerID string) []any {
	t.Helper()
	res := svc.Call(t, demoToken(t), http.MethodGet, "/api/memories?learner_id="+learnerID, nil).WantStatus(http.StatusOK)
	if res.Body["success"] != true {
		t.Fatalf("GET /api/memories: %s", res.Raw)
	}
	return res.Body["memories"].([]any)
}

// TestKnowledgeCorrectForgetAndEndSession is what Mr. Mentor knows about a
// learner, in the facilitator's hands: adding a memory (and repeating it,
// which reinforces it), correcting its text, forgetting it through the
// dialog, a memory learnt in the background showing up after an exchange,
// and ending the session with its goodbye and what to pick up next time.
// Every change is checked in the database or through the API too.
func TestKnowledgeCorrectForgetAndEndSession(t *testing.T) {
	d := startDemo(t, "knowledge", "Next time we'll try fraction strips with her.")
	b, pool := d.b, d.svc.Pool
	pickLearner(b, "Emma")
	b.waitFor("Emma's empty list", `document.getElementById('knowledge-list').textContent.startsWith('Nothing remembered about Emma yet')`)

	// Add two memories through the form.
	const horses, pizza = "Emma loves drawing horses on Sundays.", "Fractions click when they are pizza slices."
	b.step("open the add form", chromedp.Click(chromedp.CSS("#remember-box summary")), chromedp.WaitVisible(chromedp.ID("remember-text")))
	remember := func(kind, text string) {
		b.t.Helper()
		b.step("remember "+text, chromedp.SetValue(chromedp.ID("remember-type"), kind), setField("remember-text", text),
			chromedp.Click(chromedp.CSS("#remember-form button[type=submit]")))
	}
	remember("academic", pizza)
	b.waitFor("the first memory", `knownItems().length === 1 && document.getElementById('knowledge-status').textContent.startsWith('Remembered')`)
	remember("personal", horses)
	b.waitFor("the second memory, under Personal", fmt.Sprintf(`(() => {
		const item = knownItem(%q);
		return knownItems().length === 2 && item && item.closest('.known-group').querySelector('h4').textContent.startsWith('Personal') &&
			item.querySelector('.source').textContent === 'added by you' &&
			document.getElementById('remember-text').value === '';
	})()`, horses))
	stored := storedMemories(t, pool, emmaID)
	if len(stored) != 2 || stored[1] != (storedMemory{stored[1].id, "personal", horses, "added", 1}) {
		t.Fatalf("database after adding: %+v", stored)
	}
	horsesID := stored[1].id

	// Saying it again reinforces the memory instead of repeating it.
	remember("personal", horses)
	b.waitFor("the reinforced memory", fmt.Sprintf(`(() => {
		const item = knownItem(%q);
		return knownItems().length === 2 && item && item.classList.contains('fresh') &&
			item.querySelector('.source').textContent === 'added by you · mentioned 2 times' &&
			document.getElementById('knowledge-status').textContent.startsWith('Already known: reinforced');
	})()`, horses))
	if stored := storedMemories(t, pool, emmaID); len(stored) != 2 || stored[1].mentions != 2 {
		t.Fatalf("database after repeating: %+v, want 2 memories, the repeated one with 2 mentions", stored)
	}
	b.screenshot("added", true)

	// Correct the text; Escape first abandons a correction.
	correct := fmt.Sprintf(`[data-id=%q] [data-action=correct]`, horsesID)
	editText := "#edit-text-" + horsesID
	b.step("open the correction", chromedp.Click(chromedp.CSS(correct)))
	b.waitFor("the text field, focused", fmt.Sprintf(`document.activeElement === document.querySelector(%q) && document.activeElement.value === %q`, editText, horses))
	b.step("abandon it with Escape", chromedp.KeyEvent(kb.Escape))
	b.waitFor("the memory unchanged, focus back on Correct", fmt.Sprintf(`!document.querySelector(%q) && document.activeElement === document.querySelector(%q)`, editText, correct))
	const corrected = "Emma loves drawing horses and dogs, mostly on Saturdays."
	b.step("correct it", chromedp.Click(chromedp.CSS(correct)), chromedp.WaitVisible(chromedp.CSS(editText)),
		setField("edit-text-"+horsesID, corrected))
	b.screenshot("correcting", true)
	b.step("save the correction", chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-id=%q] [data-action=save]`, horsesID))))
	b.waitFor("the corrected text, saying it was corrected", fmt.Sprintf(`(() => {
		const item = knownItem(%q);
		return item && !knownItem(%q) && document.getElementById('knowledge-status').textContent.startsWith('Corrected') &&
			/^added by you, corrected on \S.* · mentioned 2 times$/.test(item.querySelector('.source').textContent) &&
			document.activeElement === item.querySelector('[data-action=correct]');
	})()`, corrected, horses))
	if stored := storedMemories(t, pool, emmaID); len(stored) != 2 || stored[1].id != horsesID || stored[1].content != corrected {
		t.Fatalf("database after correcting: %+v", stored)
	}

	// Forget it: Cancel keeps it, Forget erases it.
	forget := fmt.Sprintf(`[data-id=%q] [data-action=forget]`, horsesID)
	b.step("ask to forget", chromedp.Click(chromedp.CSS(forget)))
	b.waitFor("the dialog, focus on Cancel", fmt.Sprintf(`document.getElementById('forget-dialog').open &&
		document.activeElement.id === 'cancel-forget' && document.getElementById('forget-text').textContent === %q`, corrected))
	b.screenshot("forget-confirmation", false)
	b.step("cancel", chromedp.Click(chromedp.ID("cancel-forget")))
	b.waitFor("the memory kept, focus back on Forget", fmt.Sprintf(`!document.getElementById('forget-dialog').open &&
		knownItem(%q) && document.activeElement === document.querySelector(%q)`, corrected, forget))
	b.step("ask again and confirm", chromedp.Click(chromedp.CSS(forget)), chromedp.WaitVisible(chromedp.ID("confirm-forget")),
		chromedp.Click(chromedp.ID("confirm-forget")))
	b.waitFor("the memory gone", fmt.Sprintf(`!document.getElementById('forget-dialog').open && !knownItem(%q) &&
		knownItems().length === 1 && document.getElementById('knowledge-status').textContent.startsWith('Forgotten')`, corrected))
	if stored := storedMemories(t, pool, emmaID); len(stored) != 1 || stored[0].content != pizza {
		t.Fatalf("database after forgetting: %+v, want only %q", stored, pizza)
	}
	if listed := listMemories(t, d.svc, emmaID); len(listed) != 1 || listed[0].(map[string]any)["content"] != pizza {
		t.Fatalf("the API lists %+v after forgetting, want only %q", listed, pizza)
	}
	b.screenshot("forgotten", true)

	// Before any exchange there is no session to end: said politely.
	b.step("end a session that has not started", chromedp.Click(chromedp.ID("end-session")))
	b.waitFor("the polite notice", `[...document.querySelectorAll('#messages .notice')].some((n) =>
		n.textContent === 'There is no session to end yet: one starts when you talk with Mr. Mentor about Emma.' &&
		!n.classList.contains('error'))`)

	// A memory learnt in the background (as the extraction worker stores
	// it) shows up once the next exchange is saved.
	const learnt = "Emma gets frustrated when fractions have different denominators."
	d.svc.Exec(t, `insert into public.learner_memories
		(facilitator_id, learner_id, type, content, importance, confidence, metadata, source)
		values ($1, $2, 'academic', $3, 0.7, 0.8, '{"emotion": "frustrated", "topic": "fractions"}', 'extracted')`,
		app.DemoFacilitatorID, emmaID, learnt)
	b.step("send a message", chromedp.SendKeys(chromedp.ID("message"), "Oh! So that's why the pizza slices worked!"), pressEnter())
	b.waitFor("the reply, saved", `document.querySelectorAll('#messages .msg.assistant').length === 1 &&
		document.getElementById('memory-turns').textContent === '2'`)
	b.waitFor("the learnt memory, with its feeling and source", fmt.Sprintf(`(() => {
		const item = knownItem(%q);
		return item && item.querySelector('.badge.feeling').textContent === 'Feeling: frustrated' &&
			item.querySelector('.source').textContent === 'learnt in conversation' &&
			document.getElementById('knowledge-status').textContent === 'Mr. Mentor learnt something new about Emma.';
	})()`, learnt))

	// Learnt in this session, as extraction records it, then corrected:
	// the memory says who corrected it, and the session's end lists the
	// corrected text under what was learnt.
	d.svc.Exec(t, `with live as (select id from public.mentor_sessions where learner_id = $1::uuid and ended_at is null)
		update public.learner_memories set session_id = (select id from live) where content = $2`, emmaID, learnt)
	d.svc.Exec(t, `update public.mentor_sessions set closing = jsonb_set(closing, '{new_memories}', jsonb_build_array($2::text))
		where learner_id = $1::uuid and ended_at is null`, emmaID, learnt)
	const relearnt = "Emma gets frustrated when fractions have different denominators, less so with pizza."
	learntID := storedMemories(t, pool, emmaID)[1].id
	b.step("correct the learnt memory", chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-id=%q] [data-action=correct]`, learntID))),
		chromedp.WaitVisible(chromedp.CSS("#edit-text-"+learntID)), setField("edit-text-"+learntID, relearnt),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-id=%q] [data-action=save]`, learntID))))
	b.waitFor("the learnt memory, corrected by you", fmt.Sprintf(`(() => {
		const item = knownItem(%q);
		return item && /^corrected by you on \S/.test(item.querySelector('.source').textContent);
	})()`, relearnt))

	// End the session: the goodbye line and the hook for next time.
	b.step("end the session", chromedp.Click(chromedp.ID("end-session")))
	b.waitFor("the goodbye", `(() => {
		const closing = document.querySelector('#messages .notice.closing');
		return closing && closing.querySelector('.goodbye').textContent ===
				"Great session today with Emma: it ended on a high. Next time we'll try fraction strips with her." &&
			[...closing.querySelectorAll('.hooks li')].map((li) => li.textContent).join('|') === "Next time we'll try fraction strips with her." &&
			!document.getElementById('end-session').disabled;
	})()`)
	if listed := b.text(`(() => {
		const part = [...document.querySelectorAll('#messages .notice.closing .closing-part')]
			.find((p) => p.querySelector('.closing-heading').textContent === 'Learnt this session');
		return part ? [...part.querySelectorAll('li')].map((li) => li.textContent).join('|') : 'no list';
	})()`); listed != relearnt {
		t.Fatalf("learnt this session: %q, want the corrected %q", listed, relearnt)
	}
	var ended int
	var reason string
	if err := pool.QueryRow(context.Background(), `select count(*), coalesce(max(end_reason), '') from public.mentor_sessions
		where learner_id = $1 and ended_at is not null`, emmaID).Scan(&ended, &reason); err != nil {
		t.Fatal(err)
	}
	if ended != 1 || reason != "ended" {
		t.Fatalf("database: %d ended sessions (reason %q), want 1 ended by the client", ended, reason)
	}
	b.screenshot("session-ended", true)

	// At 375 px everything fits, correction form included.
	b.step("narrow the viewport", chromedp.EmulateViewport(375, 812))
	showView(b, "tab-knows")
	b.waitFor("no sideways scrolling", `document.documentElement.scrollWidth <= 375`)
	b.screenshot("mobile-375", true)
	pizzaID := storedMemories(t, pool, emmaID)[0].id
	b.step("correct on a phone", chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-id=%q] [data-action=correct]`, pizzaID))),
		chromedp.WaitVisible(chromedp.CSS("#edit-text-"+pizzaID)))
	b.waitFor("the form within the width", `document.documentElement.scrollWidth <= 375 &&
		document.querySelector('.known-edit').getBoundingClientRect().right <= 375`)
	b.step("show the form", chromedp.Evaluate[chromedp.Void](`document.querySelector('.known-edit').scrollIntoView({ block: 'center' })`))
	b.screenshot("mobile-375-correcting", false)

	b.noConsoleProblems("/api/sessions/end") // the 404 asked for on purpose
}
