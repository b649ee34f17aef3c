package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestSupersededMemoryIsConfirmedAndItsHistoryListed: a memory a newer one
// contradicts is shown apart as superseded, with what replaced it, its
// confidence and a flag asking for review (and so is a memory long
// unconfirmed, among the current ones); its history (opened from the
// keyboard) lists who changed what, text and confidence before and after;
// Confirm reinstates it, in the database too, and the open history shows
// the confirmation.
func TestSupersededMemoryIsConfirmedAndItsHistoryListed(t *testing.T) {
	d := startDemo(t, "lifecycle", "")
	b := d.b
	const first, corrected, changed = "Emma struggles with long division.",
		"Emma struggles with long division and remainders.", "Emma no longer struggles with long division and remainders."
	old := addMemory(t, d.svc, map[string]any{"type": "academic", "content": first}).Object("memory")["id"].(string)
	d.svc.Call(t, demoToken(t), http.MethodPatch, "/api/memories/"+old, map[string]any{"content": corrected}).WantStatus(http.StatusOK)
	res := addMemory(t, d.svc, map[string]any{"type": "academic", "content": changed})
	if res.Body["superseded"] != old {
		t.Fatalf("the changed fact should supersede the old one: %s", res.Raw)
	}
	// A context memory whose moment passed, as consolidation leaves it.
	const test = "Emma has a spelling test on Friday."
	expired := addMemory(t, d.svc, map[string]any{"type": "context", "content": test}).Object("memory")["id"].(string)
	d.svc.Exec(t, `update public.learner_memories set status = 'expired' where id = $1::uuid`, expired)
	// A memory long unconfirmed, its confidence decayed to the floor.
	const cat = "Emma has a cat called Pepper."
	addMemory(t, d.svc, map[string]any{"type": "personal", "content": cat})
	d.svc.Exec(t, `update public.learner_memories set last_seen_at = now() - interval '400 days' where content = $1`, cat)

	pickLearner(b, "Emma")
	item := func(id string) string {
		return fmt.Sprintf(`document.querySelector('#knowledge-list [data-id=%q]')`, id)
	}
	b.waitFor("the superseded memory apart, flagged, with what replaced it", fmt.Sprintf(`(() => {
		const old = %s, expired = %s, current = knownItem(%q), faded = knownItem(%q);
		const group = (li) => li.closest('.known-group').querySelector('h4').textContent;
		return old && current && expired && faded &&
			group(old) === 'No longer current (2)' && group(current) === 'Learning (1)' &&
			old.querySelector('.badge.state').textContent === 'Superseded' &&
			old.querySelector('.status-note').textContent === 'Replaced by “%s”' &&
			old.querySelector('.review-note').textContent.startsWith('Needs your review') &&
			old.querySelector('.confidence-text').textContent === 'Confidence 30%%' &&
			old.querySelector('[data-action=confirm]') &&
			current.querySelector('.confidence-text').textContent === 'Confidence 100%%' &&
			!current.querySelector('[data-action=confirm]') && !current.querySelector('.review-note') &&
			expired.querySelector('.badge.state').textContent === 'Expired' && !expired.querySelector('[data-action=confirm]') &&
			group(faded) === 'Personal (1)' && faded.querySelector('.confidence-text').textContent === 'Confidence 30%%' &&
			faded.querySelector('.review-note').textContent.includes('not confirmed for a long time') &&
			faded.querySelector('[data-action=confirm]');
	})()`, item(old), item(expired), changed, cat, changed))
	b.screenshot("superseded", true)

	// The history, opened from the keyboard.
	historyButton := fmt.Sprintf(`#knowledge-list [data-id=%q] [data-action=history]`, old)
	b.step("open the history", chromedp.Focus(chromedp.CSS(historyButton)), pressEnter())
	entries := fmt.Sprintf(`[...%s.querySelectorAll('.history-list > li')].map((li) =>
		[...li.querySelectorAll('p')].map((p) => p.textContent.replace(/ · .*$/, '')).join(' / ')).join('\n')`, item(old))
	created := fmt.Sprintf("Remembered by you / “%s” / Confidence 100%%", first)
	history := strings.Join([]string{
		created,
		fmt.Sprintf("Corrected by you / “%s” →  to “%s”", first, corrected),
		fmt.Sprintf("Superseded by you / Confidence 100%% →  to 30%% / Now superseded / Replaced by “%s”", changed),
	}, "\n")
	b.waitFor("the history", fmt.Sprintf(`(() => {
		const button = document.querySelector(%q);
		return button.getAttribute('aria-expanded') === 'true' && document.activeElement === button &&
			!document.getElementById(button.getAttribute('aria-controls')).hidden && %s === %q;
	})()`, historyButton, entries, history))
	showHistory := chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`%s.scrollIntoView({ block: 'center' })`, item(old)))
	b.step("show the history", showHistory)
	b.screenshot("history", false)

	// Confirm: the memory is current again, in the list, the history and
	// the database.
	b.step("confirm it", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#knowledge-list [data-id=%q] [data-action=confirm]`, old))))
	confirmed := history + "\nConfirmed by you / Confidence 30% →  to 100% / Now current"
	b.waitFor("the memory confirmed", fmt.Sprintf(`(() => {
		const old = %s;
		return old && old.closest('.known-group').querySelector('h4').textContent === 'Learning (2)' &&
			!old.classList.contains('retired') && !old.querySelector('[data-action=confirm]') && !old.querySelector('.review-note') &&
			old.querySelector('.confidence-text').textContent === 'Confidence 100%%' &&
			document.getElementById('knowledge-status').textContent === 'Confirmed: “%s” It is current again.' &&
			document.activeElement === old.querySelector('[data-action=correct]') && %s === %q;
	})()`, item(old), corrected, entries, confirmed))
	var status string
	var confidence float64
	var review bool
	var supersededBy *string
	if err := d.svc.Pool.QueryRow(context.Background(), `select status, confidence, needs_review, superseded_by::text
		from public.learner_memories where id = $1::uuid`, old).Scan(&status, &confidence, &review, &supersededBy); err != nil {
		t.Fatal(err)
	}
	if status != "current" || confidence != 1 || review || supersededBy != nil {
		t.Fatalf("database after confirming: status %s, confidence %v, needs_review %v, superseded_by %v", status, confidence, review, supersededBy)
	}
	b.step("show the confirmed memory", showHistory)
	b.screenshot("confirmed", false)

	b.step("close the history", chromedp.Click(chromedp.CSS(historyButton)))
	b.waitFor("the history closed", fmt.Sprintf(`(() => {
		const button = document.querySelector(%q);
		return button.getAttribute('aria-expanded') === 'false' && document.getElementById(button.getAttribute('aria-controls')).hidden;
	})()`, historyButton))
	b.noConsoleProblems()
}
