package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestSupersededMemoryIsShownApartAndConfirmed: a memory a newer one
// contradicts is shown apart as superseded, with what replaced it, its
// confidence and a flag asking for review (and so is a memory long
// unconfirmed, among the current ones); Confirm reinstates it, in the
// database too.
func TestSupersededMemoryIsShownApartAndConfirmed(t *testing.T) {
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

	// Confirm: the memory is current again, in the list and the database.
	b.step("confirm it", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#knowledge-list [data-id=%q] [data-action=confirm]`, old))))
	b.waitFor("the memory confirmed", fmt.Sprintf(`(() => {
		const old = %s;
		return old && old.closest('.known-group').querySelector('h4').textContent === 'Learning (2)' &&
			!old.classList.contains('retired') && !old.querySelector('[data-action=confirm]') && !old.querySelector('.review-note') &&
			old.querySelector('.confidence-text').textContent === 'Confidence 100%%' &&
			document.getElementById('knowledge-status').textContent === 'Confirmed: “%s” It is current again.' &&
			document.activeElement === old.querySelector('[data-action=correct]');
	})()`, item(old), corrected))
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
	b.screenshot("confirmed", true)
	b.noConsoleProblems()
}
