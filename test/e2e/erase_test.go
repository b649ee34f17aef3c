package e2e

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"mentormemory/app"
	"mentormemory/app/apptest"
)

// TestEraseLearnerAndAccount erases Emma through the page: the button is
// there only with a learner selected, the erasure waits for her name typed
// exactly, and the receipt shows what went. Emma is then gone from the
// page and from every table, Max is left as he was; then the whole account
// is erased with the word "erase", and nothing of the facilitator's is
// left.
func TestEraseLearnerAndAccount(t *testing.T) {
	d := startDemo(t, "erase", "")
	b := d.b
	d.svc.Call(t, demoToken(t), http.MethodPost, "/api/conversation-memory",
		apptest.ConversationBody(emmaID, apptest.Exchange("Emma practised her spelling list.", "Short daily practice helps.")))
	addMemory(t, d.svc, map[string]any{"type": "academic", "content": "Emma practises spelling every evening."})
	maxRows := func() int {
		return d.svc.Count(t, `select (select count(*) from public.learners where id = $1::uuid)
			+ (select count(*) from public.conversation_turns where learner_id = $1::uuid)
			+ (select count(*) from public.learner_memories where learner_id = $1::uuid)`, maxID)
	}
	maxBefore := maxRows()

	b.waitFor("no erase button for the general conversation", `document.getElementById('erase-learner').hidden`)
	pickLearner(b, "Emma")
	b.waitFor("the erase button", `!document.getElementById('erase-learner').hidden`)
	b.step("ask to erase Emma", chromedp.Click(chromedp.ID("erase-learner")))
	b.waitFor("the confirmation", `document.getElementById('erase-dialog').open &&
		document.getElementById('erase-title').textContent === 'Erase Emma?' &&
		document.getElementById('confirm-erase').disabled &&
		document.activeElement === document.getElementById('erase-confirm')`)
	b.step("type the name in the wrong case", setField("erase-confirm", "emma"))
	b.waitFor("the erasure still refused", `document.getElementById('confirm-erase').disabled`)
	b.step("type the name", setField("erase-confirm", "Emma"))
	b.waitFor("the erasure allowed", `!document.getElementById('confirm-erase').disabled`)
	b.screenshot("learner-confirm", false)
	b.step("erase Emma", chromedp.Click(chromedp.ID("confirm-erase")))
	b.waitFor("the receipt", `!document.getElementById('erase-receipt').hidden &&
		document.getElementById('erase-done').textContent === 'Emma was erased' &&
		[...document.querySelectorAll('.erase-removed li')].map((li) => li.textContent).includes('1 learner') &&
		[...document.querySelectorAll('.erase-removed li')].map((li) => li.textContent).includes('1 memory')`)
	b.screenshot("learner-receipt", false)

	if n := d.svc.Count(t, `select count(*) from public.learners where id = $1::uuid`, emmaID); n != 0 {
		t.Fatalf("database: Emma is still there (%d rows)", n)
	}
	for _, table := range []string{"conversation_turns", "conversation_updates", "learner_memories", "mentor_sessions"} {
		if n := d.svc.Count(t, `select count(*) from public.`+table+` where learner_id = $1::uuid`, emmaID); n != 0 {
			t.Errorf("database: %d %s rows of Emma's left", n, table)
		}
	}
	if n := d.svc.Count(t, `select count(*) from public.erasure_receipts where learner_id = $1::uuid`, emmaID); n != 1 {
		t.Errorf("database: %d receipts of Emma's erasure, want 1", n)
	}
	if after := maxRows(); after != maxBefore {
		t.Errorf("database: Max's rows went from %d to %d", maxBefore, after)
	}

	b.step("close the receipt", chromedp.Click(chromedp.ID("close-erase")))
	b.waitFor("Emma gone from the page", `!document.getElementById('erase-dialog').open &&
		[...document.querySelectorAll('#learner option')].map((o) => o.textContent).join(',') === 'General,Max' &&
		document.getElementById('learner').value === '' && document.getElementById('erase-learner').hidden`)

	b.step("ask to erase the account", chromedp.Click(chromedp.ID("erase-account")))
	b.waitFor("the account's confirmation", `document.getElementById('erase-dialog').open &&
		document.getElementById('erase-title').textContent === 'Erase your account?' &&
		document.getElementById('confirm-erase').disabled`)
	b.step("type erase", setField("erase-confirm", "erase"))
	b.step("erase the account", chromedp.Click(chromedp.ID("confirm-erase")))
	b.waitFor("the account's receipt", `document.getElementById('erase-done')?.textContent === 'Your account is erased' &&
		[...document.querySelectorAll('.erase-removed li')].map((li) => li.textContent).includes('1 earlier receipt')`)
	b.screenshot("account-receipt", false)
	b.step("close the receipt", chromedp.Click(chromedp.ID("close-erase")))
	b.waitFor("no learner left on the page", `document.querySelectorAll('#learner option').length === 1`)
	for _, table := range []string{"learners", "conversation_turns", "learner_memories", "erasure_receipts", "search_vocabulary"} {
		if n := d.svc.Count(t, `select count(*) from public.`+table+` where facilitator_id = $1::uuid`, app.DemoFacilitatorID); n != 0 {
			t.Errorf("database: %d %s rows of the erased account left", n, table)
		}
	}
	b.noConsoleProblems()
}
