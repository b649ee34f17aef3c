package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"

	"mentormemory/app"
	"mentormemory/app/apptest"
	"mentormemory/auth"
	"mentormemory/config"
	"mentormemory/llm/llmtest"
	"mentormemory/postgres/pgtest"

	"github.com/chromedp/chromedp"
)

const (
	secret = apptest.Secret
	emmaID = app.DemoEmmaID
	maxID  = app.DemoMaxID
)

// startModel runs an OpenAI-compatible chat model whose reply names the
// longest word of the last user message, so each answer is recognisably its
// own. signOff, when set, ends every reply, as a mentor leaving something
// for the next session does.
func startModel(t *testing.T, signOff string) *llmtest.Server[llmtest.ChatRequest] {
	return llmtest.NewScriptedChat(t, func(_ int, req llmtest.ChatRequest) http.HandlerFunc {
		reply := fmt.Sprintf("Thank you for telling me about %s. One small, calm step tonight will help; tell me how it goes.",
			distinctiveWord(req.Last("user")))
		if signOff != "" {
			reply += " " + signOff
		}
		return llmtest.ReplyContent(reply, "stop")
	})
}

func distinctiveWord(text string) string {
	best := "that"
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) > len(best) {
			best = strings.ToLower(w)
		}
	}
	return best
}

// serve runs the app on 127.0.0.1 over a database with the demo
// facilitator and learners, created as `server demo` creates them. Without
// opts.ModelURL the chat answers 503, as a server without OPENAI_API_KEY
// does.
func serve(t *testing.T, opts apptest.Options) *apptest.Service {
	t.Helper()
	svc := apptest.Start(t, opts)
	if err := app.SeedDemo(context.Background(), svc.Pool); err != nil {
		t.Fatal(err)
	}
	return svc
}

// demo is the app in dev mode with a model, and a browser signed in as the
// demo facilitator.
type demo struct {
	svc   *apptest.Service
	model *llmtest.Server[llmtest.ChatRequest]
	b     *browser
}

// startDemo starts the model (see startModel for signOff), the app and a
// browser whose screenshots are named after prefix, and signs in.
func startDemo(t *testing.T, prefix, signOff string) demo {
	t.Helper()
	chromiumPath(t)
	pgtest.URL(t) // fail or skip before starting anything when there is no database
	d := demo{model: startModel(t, signOff)}
	d.svc = serve(t, apptest.Options{ModelURL: d.model.URL, Auth: config.Auth{DevMode: true, JWTSecret: secret}})
	d.b = startBrowser(t, prefix)
	signInAsDemo(d.b, d.svc.URL)
	return d
}

// signInAsDemo opens the page and signs in with the demo button.
func signInAsDemo(b *browser, url string) {
	b.t.Helper()
	b.step("open the page", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("dev-signin")))
	b.screenshot("signin", false)
	b.step("sign in as the demo facilitator", chromedp.Click(chromedp.ID("dev-signin")), chromedp.WaitVisible(chromedp.ID("workspace")))
	b.waitFor("the learners", `document.querySelectorAll('#learner option').length === 3`)
	addHelpers(b)
}

// addHelpers defines, in the page, the test's ways of finding the memories
// on screen by their text; a reload takes them away.
func addHelpers(b *browser) {
	b.t.Helper()
	b.step("add the test's helpers", chromedp.Evaluate[chromedp.Void](`
		window.knownItems = () => [...document.querySelectorAll('#knowledge-list li.known')];
		window.knownItem = (text) => knownItems().find((li) => li.querySelector('.known-text')?.textContent === text);`))
}

// pickLearner selects a learner by name, as a change of the select does.
func pickLearner(b *browser, name string) {
	b.t.Helper()
	b.step("pick "+name, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const select = document.getElementById('learner');
		select.value = [...select.options].find((o) => o.textContent === %q).value;
		select.dispatchEvent(new Event('change', { bubbles: true }));
	})()`, name)))
}

// demoToken is an access token of the demo facilitator's.
func demoToken(t *testing.T) string {
	t.Helper()
	token, err := auth.MintHS256(secret, app.DemoFacilitatorID, "dana@example.com", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return token
}
