// Package e2e drives the web client in a real headless Chromium against the
// real server, a fresh Postgres database and a scripted OpenAI-compatible
// model.
//
// It needs Chromium (Debian's /usr/bin/chromium, or CHROMIUM_BIN) and
// DATABASE_URL. Without either it fails under CI=true and skips elsewhere;
// scripts/test.sh installs both. Screenshots of the steps go to
// test-artifacts/e2e/ at the repository root.
package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"mentormemory/app"
	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/postgres/pgtest"
)

// TestChatMemorySearchAndClear is the facilitator's path: demo sign-in,
// a learner, three exchanges, the memory panel, search, clear with
// confirmation, and the archive search.
func TestChatMemorySearchAndClear(t *testing.T) {
	d := startDemo(t, "chat", "")
	b := d.b
	if who := b.text(`document.getElementById('whoami').textContent`); who != "Signed in as dana@example.com (demo)" {
		t.Fatalf("signed in as %q", who)
	}

	// Pick Emma; the memory panel follows.
	pickLearner(b, "Emma")
	b.waitFor("Emma's empty memory", `document.getElementById('memory-scope').textContent.includes('Emma') &&
		document.getElementById('memory-summary').textContent.startsWith('No memory yet')`)

	// Three exchanges, each sent with Enter.
	exchanges := []struct{ message, word string }{
		{"Emma got stuck on fractions again today.", "fractions"},
		// Markup-like text must come back as text, in the chat and in the
		// search snippet, which the server sends HTML-escaped.
		{`She loves baking with her grandmother <3 & "cookies" on Sundays.`, "grandmother"},
		{"Bedtime reading has turned into a nightly negotiation.", "negotiation"},
	}
	for i, ex := range exchanges {
		b.step(fmt.Sprintf("send message %d", i+1), chromedp.SendKeys(chromedp.ID("message"), ex.message), pressEnter())
		b.waitFor(fmt.Sprintf("reply %d", i+1), fmt.Sprintf(`(() => {
			const replies = document.querySelectorAll('#messages .msg.assistant .text');
			return replies.length === %d && replies[%d].textContent.includes(%q) && !document.getElementById('send').disabled;
		})()`, i+1, i, ex.word))
	}
	if v := b.text(`document.getElementById('message').value`); v != "" {
		t.Fatalf("the message box was not emptied: %q", v)
	}
	b.waitFor("the memory panel to show 6 turns and a summary", `document.getElementById('memory-turns').textContent === '6' &&
		!document.getElementById('memory-summary').classList.contains('empty') &&
		document.getElementById('memory-summary').textContent.includes('fractions')`)
	b.screenshot("chat-and-memory", false)

	// The model got the session's history with each message.
	requests := d.model.Calls()
	if len(requests) != 3 {
		t.Fatalf("the model got %d requests, want 3", len(requests))
	}
	if n := len(requests[2].Body.Messages); n != 1+4+1 {
		t.Fatalf("the third request has %d messages, want system + 4 of history + 1", n)
	}

	// Search finds a past exchange, highlighted, saying who said it, in
	// plain words.
	b.step("search for grandmother", chromedp.SendKeys(chromedp.ID("search-q"), "grandmother"),
		chromedp.Click(chromedp.CSS("#search-form button[type=submit]")))
	b.waitFor("a highlighted result", `(() => {
		const mark = document.querySelector('#results .result .match mark');
		return mark && mark.textContent.toLowerCase() === 'grandmother';
	})()`)
	if meta := b.text(`document.querySelector('#results .result .meta').textContent`); !strings.HasPrefix(meta, "About Emma · 6 messages · last written ") ||
		strings.Contains(meta, "Learner-specific") || strings.Contains(meta, "archived") {
		t.Fatalf("result meta: %q", meta)
	}
	// The best matches: the facilitator's message and the reply that
	// names the same word, each with who said it.
	matches := b.text(`(() => [...document.querySelectorAll('#results .result .match')].map((li) =>
		li.querySelector('.said-who strong').textContent + ': ' + li.querySelector('.said-text').textContent).join(' | '))()`)
	if !strings.Contains(matches, `You: `+exchanges[1].message) || !strings.Contains(matches, "Mr. Mentor: Thank you for telling me about grandmother.") {
		t.Fatalf("the result's matches: %q; want the message, unescaped, and the reply, each with who said it", matches)
	}
	if elements := b.text(`[...document.querySelectorAll('#results .result .match.user .said-text *')].map((e) => e.tagName).join(',')`); elements != "MARK" {
		t.Fatalf("the facilitator's matched message holds %q; want only the highlight, no markup", elements)
	}
	// Read the conversation: its latest messages, the matches marked.
	b.step("read the conversation", chromedp.Click(chromedp.CSS("#results .result .open-conversation")))
	b.waitFor("the conversation's messages", `(() => {
		const turns = document.querySelectorAll('#results .result .conversation-turns > li');
		return turns.length === 6 && turns[2].classList.contains('matched') && turns[2].classList.contains('user') &&
			turns[2].querySelector('.said-who strong').textContent === 'You' &&
			document.querySelector('#results .result .open-conversation').getAttribute('aria-expanded') === 'true';
	})()`)
	if sent := b.text(`document.querySelectorAll('#messages .msg.user .text')[1].textContent`); sent != exchanges[1].message {
		t.Fatalf("the chat shows %q, want %q", sent, exchanges[1].message)
	}
	b.screenshot("search", false)

	// Clear, through the confirmation dialog.
	b.step("open the clear dialog", chromedp.Click(chromedp.ID("clear-memory")))
	b.waitFor("the dialog, focus on Cancel", `document.getElementById('clear-dialog').open && document.activeElement.id === 'cancel-clear' &&
		document.getElementById('clear-desc').textContent.includes('archived and searchable') &&
		document.getElementById('clear-scope').textContent === 'Emma'`)
	b.screenshot("clear-confirmation", false)
	b.step("confirm", chromedp.Click(chromedp.ID("confirm-clear")))
	b.waitFor("the archive result", `!document.getElementById('clear-dialog').open &&
		document.getElementById('memory-status').textContent.startsWith('Archived') &&
		document.getElementById('memory-turns').textContent === '0'`)
	// The results on screen were searched again: the conversation is no
	// longer a current one...
	b.waitFor("no current match", `document.getElementById('search-status').textContent.startsWith('Nothing matches') &&
		document.querySelectorAll('#results .result').length === 0`)
	b.screenshot("cleared", false)
	// ...and the archive has it.
	b.step("search the archive", chromedp.Click(chromedp.ID("include-archive")), chromedp.Click(chromedp.CSS("#search-form button[type=submit]")))
	b.waitFor("the archived conversation", `(() => {
		const result = document.querySelector('#results .result');
		return result && result.querySelector('.match mark') &&
			/^About Emma · 6 messages · archived /.test(result.querySelector('.meta').textContent);
	})()`)
	// Read the archived conversation: its summary and every message, each
	// with who said it, the matches marked.
	b.step("read the archived conversation", chromedp.Click(chromedp.CSS("#results .result .open-conversation")))
	b.waitFor("its summary and its six messages", `(() => {
		const panel = document.querySelector('#results .result .conversation');
		const turns = panel ? [...panel.querySelectorAll('.conversation-turns > li')] : [];
		return !panel.hidden && panel.querySelector('.conversation-summary')?.textContent.includes('fractions') &&
			turns.length === 6 && [...panel.querySelectorAll('h4')].pop().textContent === 'The messages' &&
			!panel.querySelector('.show-more');
	})()`)
	said := b.text(`[...document.querySelectorAll('#results .result .conversation-turns > li')].map((li) =>
		li.querySelector('.said-who strong').textContent + ': ' + li.querySelector('.said-text').textContent).join(' | ')`)
	for i, ex := range exchanges {
		if !strings.Contains(said, "You: "+ex.message+" | Mr. Mentor: ") {
			t.Fatalf("the archived conversation reads %q; want message %d, unescaped, then Mr. Mentor's reply", said, i+1)
		}
	}
	if matched := b.text(`[...document.querySelectorAll('#results .result .conversation-turns > li')].map((li) =>
		li.classList.contains('matched') ? 'm' : '-').join('')`); matched != "--mm--" {
		t.Fatalf("the matched messages of the archive are %q, want the second exchange's (--mm--)", matched)
	}
	b.step("scroll to the messages", chromedp.ScrollIntoView(chromedp.CSS("#results .result .conversation-turns")))
	b.screenshot("archive-search", false)

	// A longer archive (an import's, or a server archiving every 120
	// turns) shows its first 100 messages, and the rest on "Show more".
	archiveID := apptest.Scalar[string](t, d.svc.Pool, `insert into public.conversation_history_archive
		(facilitator_id, summary, turn_count) values ($1::uuid, 'The lighthouse trip, planned at length.', 120) returning id::text`,
		app.DemoFacilitatorID)
	d.svc.Exec(t, `insert into public.conversation_turns (facilitator_id, archive_id, role, content)
		select $1::uuid, $2::uuid, case when n % 2 = 1 then 'user' else 'assistant' end, 'Lighthouse message ' || n
		from generate_series(1, 120) n`, app.DemoFacilitatorID, archiveID)
	b.step("search for the lighthouse", setField("search-q", "lighthouse"), chromedp.Click(chromedp.CSS("#search-form button[type=submit]")))
	b.step("read the long archive", chromedp.WaitVisible(chromedp.CSS(`#results .result[data-id="`+archiveID+`"] .open-conversation`)),
		chromedp.Click(chromedp.CSS(`#results .result[data-id="`+archiveID+`"] .open-conversation`)))
	longArchive := `document.querySelector('#results .result[data-id="` + archiveID + `"] .conversation')`
	b.waitFor("its first 100 messages", `(() => {
		const panel = `+longArchive+`;
		const turns = panel.querySelectorAll('.conversation-turns > li');
		return turns.length === 100 && turns[99].querySelector('.said-text').textContent === 'Lighthouse message 100' &&
			[...panel.querySelectorAll('h4')].pop().textContent === 'The first 100 of 120 messages' && panel.querySelector('.show-more');
	})()`)
	b.step("show more", chromedp.Click(chromedp.CSS(`#results .result[data-id="`+archiveID+`"] .show-more`)))
	b.waitFor("all 120, the first new one focused", `(() => {
		const panel = `+longArchive+`;
		const turns = panel.querySelectorAll('.conversation-turns > li');
		return turns.length === 120 && turns[119].querySelector('.said-text').textContent === 'Lighthouse message 120' &&
			turns[119].querySelector('.said-who strong').textContent === 'Mr. Mentor' &&
			[...panel.querySelectorAll('h4')].pop().textContent === 'The messages' && !panel.querySelector('.show-more') &&
			document.activeElement === turns[100];
	})()`)
	b.screenshot("long-archive", false)

	// At 375 px the page fits and shows one thing at a time: the search
	// that was on screen.
	b.step("narrow the viewport", chromedp.EmulateViewport(375, 812))
	showView(b, "tab-search")
	b.waitFor("one view at a time", `(() => {
		const shown = (id) => document.getElementById(id).getClientRects().length > 0;
		const panel = document.getElementById('search-panel').getBoundingClientRect();
		return document.documentElement.scrollWidth <= 375 && shown('search-panel') && !shown('chat-panel') && !shown('memory') &&
			panel.width <= 375;
	})()`)
	b.screenshot("mobile-375", true)

	// What the browser did reached the database: six turns with the
	// client's ids, archived in one segment with its summary.
	withIDs := d.svc.Count(t, `select count(*) from conversation_turns where client_turn_id ~ '^[0-9a-f-]{36}$' and learner_id = $1`, emmaID)
	archives := d.svc.Count(t, `select count(*) from conversation_history_archive where learner_id = $1`, emmaID)
	archivedTurns := d.svc.Count(t, `select coalesce(sum(turn_count), 0) from conversation_history_archive where learner_id = $1 and summary <> ''`, emmaID)
	if withIDs != 6 || archives != 1 || archivedTurns != 6 {
		t.Fatalf("database: %d turns with client ids, %d archives of %d turns; want 6, 1, 6", withIDs, archives, archivedTurns)
	}
	b.noConsoleProblems()
}

// TestSupabaseSignInTokensAndNoModel covers Supabase's ways in and the
// server without a model: no developer's way in shows; the password grant
// (a wrong password first, its error under the form and on a phone's
// screen); "Forgot your password?" and "Create an account", which ask
// Supabase to send their emails; the refresh before expiry; sign-out; the
// link back from a password-reset email, which asks for a new password and
// signs in; and the 503 of the chat shown in the chat area.
func TestSupabaseSignInTokensAndNoModel(t *testing.T) {
	chromiumPath(t)
	pgtest.URL(t)

	supabase := apptest.StartSupabaseAuth(t)
	const email, password = "dana@example.com", "correct horse battery staple"
	supabase.AddAccount(email, password, app.DemoFacilitatorID)
	// 62 s tokens: the page renews 60 s before expiry, so after 2 s.
	supabase.SetTokenTTL(62 * time.Second)
	// The service takes Supabase's tokens, and the ones signed with the
	// project's legacy secret that the test pastes.
	url := serve(t, apptest.Options{
		Auth: config.Auth{SupabaseURL: supabase.URL, SupabaseAnonKey: supabase.AnonKey, JWTSecret: secret},
	}).URL
	b := startBrowser(t, "supabase")

	b.step("become a phone", phone())
	b.step("open the page", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("signin-supabase")))
	if shown := b.text(`['signin-dev', 'signin-token-box'].filter((id) => document.getElementById(id).getClientRects().length > 0).join()`); shown != "" {
		t.Fatalf("the developer's ways in show without dev mode: %s", shown)
	}
	if text := b.text(`document.getElementById('signin').innerText`); strings.Contains(text, "scripts/dev.sh") || strings.Contains(text, "token") {
		t.Fatalf("the sign-in page speaks of developer tools: %q", text)
	}
	b.step("sign in with a wrong password",
		chromedp.SendKeys(chromedp.ID("signin-email"), email),
		chromedp.SendKeys(chromedp.ID("signin-password"), "wrong"),
		chromedp.Click(chromedp.CSS("#signin-supabase button[type=submit]")))
	b.waitFor("the sign-in error, under the form, on screen", `(() => {
		const error = document.getElementById('signin-error');
		const r = error.getBoundingClientRect();
		return !error.hidden && error.textContent === 'Invalid login credentials' &&
			error.parentElement.id === 'signin-supabase' && r.top >= 0 && r.bottom <= innerHeight;
	})()`)
	b.screenshot("wrong-password", false)

	// Forgot your password: an email address first, then Supabase sends
	// the link back to this page.
	b.step("forget the password without an email", setField("signin-email", ""), chromedp.Click(chromedp.ID("forgot-password")))
	b.waitFor("the email asked for", `document.getElementById('signin-error').textContent.startsWith('Write your email address above first')`)
	b.step("forget the password", setField("signin-email", email), chromedp.Click(chromedp.ID("forgot-password")))
	b.waitFor("the confirmation", fmt.Sprintf(`(() => {
		const note = document.getElementById('signin-note');
		return !note.hidden && note.textContent === 'If %s has an account, an email is on its way with a link to choose a new password.' &&
			document.getElementById('signin-error').hidden;
	})()`, email))
	if sent := supabase.Emails(); len(sent) != 1 || sent[0] != (apptest.Email{Kind: "recovery", To: email, RedirectTo: url + "/"}) {
		t.Fatalf("emails sent: %+v, want one recovery email to %s leading back to %s/", sent, email, url)
	}

	// Create an account: Supabase sends a link to confirm the address.
	const newcomer = "sam@example.com"
	b.step("open the sign-up form", chromedp.Click(chromedp.ID("show-signup")), chromedp.WaitVisible(chromedp.ID("signup-form")))
	b.step("create an account", setField("signup-email", newcomer), setField("signup-password", "a long enough password"),
		chromedp.Click(chromedp.CSS("#signup-form button[type=submit]")))
	b.waitFor("the confirmation", fmt.Sprintf(`(() => {
		const note = document.getElementById('signin-note');
		return !note.hidden && note.textContent.startsWith('Almost done: we sent an email to %s.') &&
			!document.getElementById('signin-supabase').hidden && document.getElementById('signup-form').hidden &&
			document.getElementById('signin-email').value === %q;
	})()`, newcomer, newcomer))
	b.screenshot("signed-up", false)
	if sent := supabase.Emails(); len(sent) != 2 || sent[1] != (apptest.Email{Kind: "signup", To: newcomer, RedirectTo: url + "/"}) {
		t.Fatalf("emails sent: %+v, want a confirmation email to %s", sent, newcomer)
	}

	b.step("become a desktop", chromedp.EmulateViewport(1280, 900))
	b.step("sign in", setField("signin-email", email), setField("signin-password", ""),
		chromedp.SendKeys(chromedp.ID("signin-password"), password),
		chromedp.Click(chromedp.CSS("#signin-supabase button[type=submit]")),
		chromedp.WaitVisible(chromedp.ID("workspace")))
	if who := b.text(`document.getElementById('whoami').textContent`); who != "Signed in as dana@example.com" {
		t.Fatalf("signed in as %q", who)
	}
	first := b.text(`JSON.parse(sessionStorage.getItem('mentor.session')).access_token`)

	// No model: the page says so, and a message gets plain words, not
	// the server's advice to its operator.
	b.waitFor("the no-model notice", `[...document.querySelectorAll('#messages .notice.warning')].some((n) => n.textContent.startsWith('No mentor model is configured on this server'))`)
	b.step("send a message", chromedp.SendKeys(chromedp.ID("message"), "Is anyone there?"), chromedp.Click(chromedp.ID("send")))
	b.waitFor("the plain no-model answer", `(() => {
		const notices = [...document.querySelectorAll('#messages .notice.warning')];
		return notices.some((n) => n.textContent.startsWith('Mr. Mentor can’t answer on this server yet')) &&
			!document.getElementById('messages').textContent.includes('OPENAI_API_KEY') &&
			document.querySelector('#messages .msg.user').classList.contains('failed') &&
			document.getElementById('message').value === 'Is anyone there?';
	})()`)
	b.screenshot("no-model", false)

	// The token is renewed before it expires, and the API takes the new one.
	b.waitFor("a refreshed token", fmt.Sprintf(`JSON.parse(sessionStorage.getItem('mentor.session')).access_token !== %q`, first))
	if grants := supabase.Grants(); len(grants) < 3 || grants[2] != "refresh_token" {
		t.Fatalf("grants: %v, want password, password, refresh_token…", grants)
	}
	b.step("search with the new token", chromedp.SendKeys(chromedp.ID("search-q"), "anything"),
		chromedp.Click(chromedp.CSS("#search-form button[type=submit]")))
	b.waitFor("an answer", `document.getElementById('search-status').textContent.startsWith('Nothing matches')`)

	// Sign out: the session is gone and the refresh token revoked.
	b.step("sign out", chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("signin")))
	if stored := b.text(`String(sessionStorage.getItem('mentor.session'))`); stored != "null" {
		t.Fatalf("session left after sign-out: %s", stored)
	}
	if left := b.text(`document.getElementById('message').value + document.getElementById('search-q').value`); left != "" {
		t.Fatalf("text left on screen after sign-out: %q", left)
	}
	deadline := time.Now().Add(5 * time.Second)
	for supabase.Logouts() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("sign-out did not call Supabase's logout")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Back from the password-reset email: the link's session asks for a
	// new password, saves it with Supabase, and signs in.
	recovery := supabase.Token(t, app.DemoFacilitatorID, email)
	supabase.SignIn(recovery, app.DemoFacilitatorID)
	// The email's link opens the page afresh, as from another app.
	b.step("follow the email's link", chromedp.Navigate("about:blank"), chromedp.Navigate(url+"/#access_token="+recovery+"&expires_in=3600&refresh_token=r1&token_type=bearer&type=recovery"),
		chromedp.WaitVisible(chromedp.ID("new-password")))
	if shown := b.text(`document.getElementById('new-password-for').textContent + ' ' + location.hash`); shown != "For dana@example.com. " {
		t.Fatalf("the new password's form says %q; want whose password it is, and the token gone from the address", shown)
	}
	const newPassword = "a brand new horse battery"
	b.step("choose a new password", setField("new-password", newPassword),
		chromedp.Click(chromedp.CSS("#new-password-form button[type=submit]")), chromedp.WaitVisible(chromedp.ID("workspace")))
	if got := supabase.Password(email); got != newPassword {
		t.Fatalf("the password is %q after the reset, want %q", got, newPassword)
	}
	b.waitFor("the learners", `document.querySelectorAll('#learner option').length === 3`)

	// A new learner is added and selected.
	b.step("add a learner", chromedp.Click(chromedp.CSS("#add-learner-box summary")),
		chromedp.SendKeys(chromedp.ID("add-learner-name"), "Sam"), pressEnter())
	b.waitFor("Sam selected", `(() => {
		const select = document.getElementById('learner');
		return select.options.length === 4 && select.selectedOptions[0].textContent === 'Sam' &&
			document.getElementById('memory-scope').textContent.includes('Sam');
	})()`)
	b.screenshot("learner-added", false)

	b.noConsoleProblems("/api/counselor", "/auth/v1/token?grant_type=password")
}

// TestATokenIsTheWayInWithoutSupabase: in dev mode the sign-in page offers
// a pasted token with the commands that make one; a server with neither
// dev mode nor Supabase has the token as its only way in, without those
// commands. Nonsense is refused right under the field; a real token works.
func TestATokenIsTheWayInWithoutSupabase(t *testing.T) {
	chromiumPath(t)
	pgtest.URL(t)
	dev := serve(t, apptest.Options{Auth: config.Auth{DevMode: true, JWTSecret: secret}}).URL
	plain := serve(t, apptest.Options{Auth: config.Auth{JWTSecret: secret}}).URL
	b := startBrowser(t, "token")

	b.step("open the dev server's page", chromedp.Navigate(dev), chromedp.WaitVisible(chromedp.ID("dev-signin")))
	if shown := b.text(`['signin-token-box', 'signin-token-dev'].map((id) => document.getElementById(id).hidden).join()`); shown != "false,false" {
		t.Fatalf("in dev mode the token box and its commands are hidden: %s", shown)
	}

	b.step("open the plain server's page", chromedp.Navigate(plain), chromedp.WaitVisible(chromedp.ID("signin-token-input")))
	if text := b.text(`document.getElementById('signin').innerText`); strings.Contains(text, "scripts/dev.sh") ||
		!strings.Contains(text, "Ask the person who runs this server for one.") {
		t.Fatalf("the sign-in page without dev mode says %q", text)
	}
	b.step("paste nonsense", chromedp.SendKeys(chromedp.ID("signin-token-input"), "not-a-token"),
		chromedp.Click(chromedp.CSS("#signin-token button[type=submit]")))
	b.waitFor("the token error, under the field", `(() => {
		const error = document.getElementById('signin-error');
		return error.textContent.startsWith('That is not an access token') && error.parentElement.id === 'signin-token-box';
	})()`)
	b.step("paste a token", setField("signin-token-input", demoToken(t)),
		chromedp.Click(chromedp.CSS("#signin-token button[type=submit]")),
		chromedp.WaitVisible(chromedp.ID("workspace")))
	b.waitFor("the learners", `document.querySelectorAll('#learner option').length === 3`)
	b.noConsoleProblems()
}
