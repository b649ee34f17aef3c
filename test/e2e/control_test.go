package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"mentormemory/app/apptest"
)

// TestFacilitatorSeesSourcesAndControlsLearning is the facilitator's
// control over what Mr. Mentor learns, in the knowledge panel: a memory's
// sources (the turns it was learnt from, with their dates), whether he is
// learning now, forgetting a whole category through its confirmation, and
// the "Don't learn" switch, which persists.
func TestFacilitatorSeesSourcesAndControlsLearning(t *testing.T) {
	d := startDemo(t, "control", "")
	b := d.b
	token := demoToken(t)
	const said, answer = "Emma drew a whole herd of horses this weekend.", "Let's count horses in her maths."
	d.svc.Call(t, token, http.MethodPost, "/api/conversation-memory",
		apptest.ConversationBody(emmaID, apptest.Exchange(said, answer))).WantStatus(http.StatusOK)
	// Learnt from that exchange, as extraction stores it (the tests' app
	// runs no worker).
	const learnt = "Emma loves drawing horses."
	learntID := apptest.Scalar[string](t, d.svc.Pool, `insert into public.learner_memories (facilitator_id, learner_id, type,
			content, importance, confidence, source, source_turn_ids)
		select facilitator_id, learner_id, 'personal', $2, 0.6, 0.7, 'extracted', array_agg(id order by id)
		from public.conversation_turns where learner_id = $1::uuid group by facilitator_id, learner_id
		returning id::text`, emmaID, learnt)
	const division, fractions = "Emma struggles with long division.", "Emma enjoys fractions with pizza."
	addMemory(t, d.svc, map[string]any{"type": "academic", "content": division})
	addMemory(t, d.svc, map[string]any{"type": "academic", "content": fractions})

	pickLearner(b, "Emma")
	b.waitFor("the memories and whether he is learning", fmt.Sprintf(`knownItems().length === 3 && knownItem(%q) &&
		document.getElementById('learning-now').textContent.startsWith('Learning now: learning from 1 exchange') &&
		!document.getElementById('dont-learn').checked`, learnt))

	sources := fmt.Sprintf(`#knowledge-list [data-id=%q] [data-action=sources]`, learntID)
	b.step("open the sources", chromedp.Click(chromedp.CSS(sources)))
	b.waitFor("the turns it was learnt from, with their dates", fmt.Sprintf(`(() => {
		const items = [...document.querySelectorAll('#sources-%s .sources-list > li')];
		return items.length === 2 && items[0].querySelector('.source-text').textContent === %q &&
			items[1].querySelector('.source-text').textContent === %q &&
			items.every((li) => li.querySelector('time') && li.querySelector('.source-when').textContent.includes('this conversation')) &&
			document.querySelector(%q).getAttribute('aria-expanded') === 'true';
	})()`, learntID, said, answer, sources))
	b.step("show the sources", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById('sources-%s').scrollIntoView({ block: 'center' })`, learntID)))
	b.screenshot("sources", false)

	// Forget every "Learning" memory about Emma, after confirming.
	b.step("choose Learning", chromedp.SetValue(chromedp.ID("forget-category"), "academic"),
		chromedp.Click(chromedp.ID("forget-category-button")))
	b.waitFor("the confirmation", `!document.querySelector('.forget-confirm').hidden &&
		document.querySelector('.forget-confirm p').textContent.includes('every “Learning” memory') &&
		document.activeElement.textContent === 'Cancel'`)
	b.screenshot("forget-category", true)
	b.step("forget them", chromedp.Click(chromedp.ID("forget-category-confirm")))
	b.waitFor("the category forgotten", fmt.Sprintf(`knownItems().length === 1 && knownItem(%q) &&
		document.getElementById('knowledge-status').textContent === 'Forgotten: 2 memories about Emma.' &&
		document.querySelector('.forget-confirm').hidden`, learnt))
	if left := storedMemories(t, d.svc.Pool, emmaID); len(left) != 1 || left[0].content != learnt {
		t.Fatalf("memories left in the database: %+v, want only %q", left, learnt)
	}
	if n := d.svc.Count(t, `select count(*) from public.memory_history where learner_id = $1::uuid
		and (content_before like '%division%' or content_after like '%division%' or content_after like '%fractions%')`, emmaID); n != 0 {
		t.Fatalf("%d history entries keep the forgotten texts", n)
	}

	// Don't learn about Emma: it is stored, and still on after coming back.
	b.step("turn learning off", chromedp.Click(chromedp.ID("dont-learn")))
	b.waitFor("learning off", `document.getElementById('learning-now').textContent.startsWith('Learning is off')`)
	if n := d.svc.Count(t, `select count(*) from public.learner_settings where learner_id = $1::uuid and not learning`, emmaID); n != 1 {
		t.Fatal("turning learning off was not stored")
	}
	pickLearner(b, "General")
	b.waitFor("the general conversation", `document.getElementById('learning-control').hidden`)
	pickLearner(b, "Emma")
	b.waitFor("the switch as stored", `!document.getElementById('learning-control').hidden &&
		document.getElementById('dont-learn').checked &&
		document.getElementById('learning-now').textContent.startsWith('Learning is off')`)

	b.step("narrow the viewport", chromedp.EmulateViewport(375, 812))
	showView(b, "tab-knows")
	b.waitFor("the controls fit at 375 px", `document.documentElement.scrollWidth <= 375`)
	b.step("show the controls", chromedp.Evaluate[chromedp.Void](`document.getElementById('learning-control').scrollIntoView({ block: 'center' })`))
	b.screenshot("control-375", false)
	b.noConsoleProblems()
}
