package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestALearnerIsNotAddedTwiceByMistakeAndCanBeRenamed: adding a name the
// facilitator already has, in other case and spacing, asks first; Cancel
// adds nothing, "Add another" adds the second one. Renaming the learner
// being talked about keeps the conversation on screen and names them
// everywhere, in the database too.
func TestALearnerIsNotAddedTwiceByMistakeAndCanBeRenamed(t *testing.T) {
	d := startDemo(t, "learners", "")
	b := d.b
	learners := func() int {
		t.Helper()
		return d.svc.Count(t, `select count(*) from public.learners`)
	}

	// Talk about Max, then rename him: the conversation stays.
	pickLearner(b, "Max")
	b.step("send a message", chromedp.SendKeys(chromedp.ID("message"), "Max built a railway across the kitchen."), pressEnter())
	b.waitFor("the reply", `document.querySelectorAll('#messages .msg.assistant').length === 1 && !document.getElementById('send').disabled`)
	b.step("open the rename form", chromedp.Click(chromedp.ID("rename-learner")), chromedp.WaitVisible(chromedp.ID("rename-learner-name")))
	if label := b.text(`document.getElementById('rename-learner-label').textContent + ' / ' + document.getElementById('rename-learner-name').value`); label != "New name for Max / Max" {
		t.Fatalf("the rename form: %q", label)
	}
	b.step("rename Max", setField("rename-learner-name", "Maximilian"), chromedp.Click(chromedp.CSS("#rename-learner-form button[type=submit]")))
	b.waitFor("Maximilian everywhere, the conversation kept", `(() => {
		const select = document.getElementById('learner');
		return select.selectedOptions[0].textContent === 'Maximilian' &&
			![...select.options].some((o) => o.textContent === 'Max') &&
			document.getElementById('memory-scope').textContent === '· Maximilian' &&
			document.getElementById('rename-learner-form').hidden &&
			document.querySelectorAll('#messages .msg').length === 2;
	})()`)
	if name := d.svc.Count(t, `select count(*) from public.learners where id = $1::uuid and name = 'Maximilian'`, maxID); name != 1 {
		t.Fatal("the database does not have Max renamed")
	}
	b.screenshot("renamed", false)

	// Adding "emma" again asks first.
	b.step("add emma", chromedp.Click(chromedp.CSS("#add-learner-box summary")), setField("add-learner-name", "  emma "),
		chromedp.Click(chromedp.CSS("#add-learner button[type=submit]")))
	b.waitFor("the question", `(() => {
		const box = document.getElementById('add-learner-confirm');
		return !box.hidden && document.getElementById('add-learner-question').textContent ===
			'You already have Emma. Add another learner named emma?' && document.activeElement.id === 'add-learner-cancel';
	})()`)
	b.screenshot("same-name", false)
	b.step("cancel", chromedp.Click(chromedp.ID("add-learner-cancel")))
	b.waitFor("nothing added", `document.getElementById('add-learner-confirm').hidden && document.querySelectorAll('#learner option').length === 3`)
	if n := learners(); n != 2 {
		t.Fatalf("%d learners after cancelling, want 2", n)
	}
	b.step("ask again", chromedp.Click(chromedp.CSS("#add-learner button[type=submit]")), chromedp.WaitVisible(chromedp.ID("add-learner-again")))
	b.step("add another", chromedp.Click(chromedp.ID("add-learner-again")))
	b.waitFor("the second emma, selected", `(() => {
		const select = document.getElementById('learner');
		return select.options.length === 4 && select.selectedOptions[0].textContent === 'emma' &&
			document.getElementById('add-learner-confirm').hidden;
	})()`)
	if n := learners(); n != 3 {
		t.Fatalf("%d learners after adding another, want 3", n)
	}
	if n := d.svc.Count(t, `select count(*) from public.learners where lower(name) = 'emma'`); n != 2 {
		t.Fatalf("%d learners named emma, want 2", n)
	}
	b.noConsoleProblems()
}
