package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"mentormemory/app/apptest"
	"mentormemory/postgres"
	"mentormemory/worker"
)

// addMemory stores a memory of Emma's through the API, as the demo
// facilitator, and returns the answer.
func addMemory(t *testing.T, svc *apptest.Service, memory map[string]any) apptest.Response {
	t.Helper()
	memory["learner_id"] = emmaID
	res := svc.Call(t, demoToken(t), http.MethodPost, "/api/memories", memory)
	if res.Status != http.StatusCreated {
		t.Fatalf("POST /api/memories %v: %s", memory, res)
	}
	return res
}

// runConsolidation runs the consolidation queued for Emma as the server's
// worker would (the tests' app runs no worker): it waits for the run to be
// queued, then runs it.
func runConsolidation(t *testing.T, svc *apptest.Service) {
	t.Helper()
	w := worker.New(postgres.NewStore(svc.Pool, 50), worker.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	deadline := time.Now().Add(stepLimit)
	for {
		ran, err := w.RunConsolidationOnce(context.Background())
		if err != nil {
			t.Fatalf("consolidation: %v", err)
		}
		if ran {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no consolidation was queued")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// profileOnScreen is the profile as the page shows it: each heading with
// its lines, "heading: line | line", one heading a line of text.
const profileOnScreen = `[...document.querySelectorAll('#profile-body .profile-section')].map((section) =>
	section.querySelector('h5').textContent + ': ' +
	[...section.querySelectorAll('li')].map((li) => li.textContent).join(' | ')).join('\n')`

// TestProfileIsBuiltAndShownUnderItsHeadings is the learner's profile at
// the top of what Mr. Mentor knows: empty before any consolidation;
// "Refresh the profile" (pressed from the keyboard) asks the server for a
// run, waits for it, and shows what it built, each line under its
// category's heading and as text; a line the facilitator wrote is marked
// as theirs.
func TestProfileIsBuiltAndShownUnderItsHeadings(t *testing.T) {
	d := startDemo(t, "profile", "")
	b := d.b
	const markup = `Emma named her dog <b>Biscuit</b> & draws him daily.`
	for _, m := range []map[string]any{
		{"type": "personal", "content": markup},
		{"type": "academic", "content": "Emma struggles with long division.", "metadata": map[string]any{"valence": "negative", "topic": "division"}},
		{"type": "academic", "content": "Fractions clicked with pizza slices.", "metadata": map[string]any{"valence": "positive", "topic": "fractions"}},
		{"type": "preference", "content": "Emma likes to sketch a problem before solving it."},
		{"type": "preference", "content": "A short walk calms Emma when she is frustrated.",
			"metadata": map[string]any{"category": "emotional_response", "trigger": "frustrated"}},
	} {
		addMemory(t, d.svc, m)
	}

	pickLearner(b, "Emma")
	b.waitFor("the empty profile", `!document.getElementById('profile').hidden &&
		document.getElementById('profile-title').textContent === 'Emma at a glance' &&
		document.getElementById('profile-body').textContent.startsWith('No profile of Emma yet') &&
		knownItems().length === 5`)
	b.screenshot("profile-empty", false)

	b.step("refresh the profile from the keyboard", chromedp.Focus(chromedp.ID("profile-rebuild")), pressEnter())
	b.waitFor("the page waiting for the run", `document.getElementById('profile-rebuild').disabled &&
		document.getElementById('profile-status').textContent.startsWith('Mr. Mentor is going over what he knows about Emma')`)
	runConsolidation(t, d.svc)
	want := strings.Join([]string{
		"Who they are: " + markup,
		"Strengths and breakthroughs: Fractions clicked with pizza slices.",
		"Struggles: Emma struggles with long division.",
		"How they like to learn: Emma likes to sketch a problem before solving it.",
		"Emotional patterns: A short walk calms Emma when she is frustrated.",
	}, "\n")
	b.waitFor("the profile under its headings", fmt.Sprintf(`%s === %q &&
		document.getElementById('profile-status').textContent === 'Profile refreshed: no memory needed changing.' &&
		!document.getElementById('profile-rebuild').disabled`, profileOnScreen, want))
	if elements := b.text(`String(document.querySelectorAll('#profile-body .profile-text *').length)`); elements != "0" {
		t.Fatalf("the profile's text became %s elements: it must stay text", elements)
	}
	if n := d.svc.Count(t, `select count(*) from public.consolidation_runs
		where learner_id = $1 and trigger = 'on_demand' and status = 'done' and profile_tokens_after > 0`, emmaID); n != 1 {
		t.Fatalf("database: %d on-demand runs done with a profile, want the 1 the page asked for", n)
	}
	b.screenshot("profile-built", true)

	// A line the facilitator wrote (through the API) is shown as theirs
	// once the list is refreshed.
	const goal = "Read a chapter book alone by summer."
	d.svc.Call(t, demoToken(t), http.MethodPut, "/api/learners/"+emmaID+"/profile", map[string]any{
		"lines": []map[string]any{{"category": "goals", "text": goal}},
	}).WantStatus(http.StatusOK)
	b.step("refresh the panel", chromedp.Click(chromedp.ID("knowledge-refresh")))
	b.waitFor("the facilitator's line, marked as theirs", fmt.Sprintf(`(() => {
		const section = document.querySelector('#profile-body .profile-section[data-category="goals"]');
		const line = section && section.querySelector('li');
		return line && section.querySelector('h5').textContent === 'Goals and what is next' &&
			line.querySelector('.profile-text').textContent === %q && line.querySelector('.badge.yours').textContent === 'written by you' &&
			document.querySelectorAll('#profile-body .badge.yours').length === 1;
	})()`, goal))

	// The digest of the last sessions, as a consolidation keeps it, under
	// the profile's headings.
	d.svc.Exec(t, `update public.learner_profiles set digest = $2::jsonb where learner_id = $1::uuid`, emmaID,
		`{"sessions": ["s2", "s1"], "themes": ["Felt frustrated in 2 of the last 2 sessions."],
		  "standing": ["The last session, Monday 2 March, ended excited.", "Still working on: long division."],
		  "recent": ["Monday 2 March, 6 exchanges over 20 minutes.", "Friday 27 February, 4 exchanges over 15 minutes."], "tokens": 60}`)
	b.step("refresh the panel", chromedp.Click(chromedp.ID("knowledge-refresh")))
	b.waitFor("the last sessions under the profile", `(() => {
		const digest = document.querySelector('#profile-body .profile-digest');
		return digest && digest.querySelector('h5').textContent === 'The last 2 sessions' &&
			[...digest.querySelectorAll('h6')].map((h) => h.textContent).join('|') === 'Where things stand|What keeps coming back|Session by session' &&
			[...digest.querySelectorAll('li')].map((li) => li.textContent).join('|') ===
				'The last session, Monday 2 March, ended excited.|Still working on: long division.|Felt frustrated in 2 of the last 2 sessions.|' +
				'Monday 2 March, 6 exchanges over 20 minutes.|Friday 27 February, 4 exchanges over 15 minutes.';
	})()`)

	// The general conversation has no profile.
	pickLearner(b, "General")
	b.waitFor("no profile", `document.getElementById('profile').hidden`)
	pickLearner(b, "Emma")
	b.waitFor("Emma's profile again", `document.querySelectorAll('#profile-body .profile-section').length === 6`)

	b.step("narrow the viewport", chromedp.EmulateViewport(375, 812))
	showView(b, "tab-knows")
	b.waitFor("no sideways scrolling", `document.documentElement.scrollWidth <= 375`)
	b.screenshot("profile-375", true)
	b.noConsoleProblems()
}
