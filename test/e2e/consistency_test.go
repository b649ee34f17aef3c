package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/handlers"
	"mentormemory/postgres/pgtest"
)

// tokenCall is one API request the page made, as tokenRecorder saw it:
// the consistency token it brought and the one its answer carried.
type tokenCall struct {
	route             string // "POST /api/conversation-memory"
	brought, answered string
}

// tokenRecorder stands between the page and the app, as a load balancer
// does, and notes the consistency tokens of every API request.
type tokenRecorder struct {
	URL   string
	mu    sync.Mutex
	calls []tokenCall
}

func startTokenRecorder(t *testing.T, target string) *tokenRecorder {
	t.Helper()
	rec := &tokenRecorder{}
	rec.URL = startProxy(t, target, func(proxy http.Handler, w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			proxy.ServeHTTP(w, r)
			return
		}
		call := tokenCall{route: r.Method + " " + r.URL.Path, brought: r.Header.Get(handlers.ConsistencyTokenHeader)}
		proxy.ServeHTTP(w, r)
		call.answered = w.Header().Get(handlers.ConsistencyTokenHeader)
		rec.mu.Lock()
		rec.calls = append(rec.calls, call)
		rec.mu.Unlock()
	})
	return rec
}

// made is the calls of route so far, in the order they were answered.
func (rec *tokenRecorder) made(route string) []tokenCall {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var calls []tokenCall
	for _, c := range rec.calls {
		if c.route == route {
			calls = append(calls, c)
		}
	}
	return calls
}

// TestThePageBringsItsLastSavesTokenToItsNextRequests: with a read
// replica, the answer to the chat's save of an exchange carries a
// consistency token, and the page brings it to the requests after it (the
// next message's recall, the next save, the export), so that whichever
// server instance answers them sees the exchange.
func TestThePageBringsItsLastSavesTokenToItsNextRequests(t *testing.T) {
	chromiumPath(t)
	standby := pgtest.StandbyURL(t)
	model := startModel(t, "")
	svc := serve(t, apptest.Options{ModelURL: model.URL, Auth: config.Auth{DevMode: true, JWTSecret: secret},
		Standby: standby, ReplicaMaxLag: time.Minute})
	rec := startTokenRecorder(t, svc.URL)
	b := startBrowser(t, "consistency")
	signInAsDemo(b, rec.URL)
	pickLearner(b, "Emma")
	send := func(message string, turns int) {
		t.Helper()
		b.step("send: "+message, chromedp.SendKeys(chromedp.ID("message"), message), pressEnter())
		b.waitFor(fmt.Sprintf("%d turns saved", turns), fmt.Sprintf(`document.getElementById('memory-turns').textContent === '%d'`, turns))
	}

	send("Emma counted to twenty on her own today.", 2)
	saves := rec.made("POST /api/conversation-memory")
	if len(saves) != 1 || saves[0].answered == "" {
		t.Fatalf("the save's answer carries no token: %+v", saves)
	}
	first := saves[0].answered

	send("Tomorrow she starts swimming lessons.", 4)
	chats := rec.made("POST /api/counselor")
	if len(chats) != 2 || chats[1].brought != first {
		t.Errorf("the messages' requests %+v: want the second to bring the first save's token %q", chats, first)
	}
	saves = rec.made("POST /api/conversation-memory")
	if len(saves) != 2 || saves[1].brought != first || saves[1].answered == "" || saves[1].answered == first {
		t.Fatalf("the second save brought %+v, want the first save's token %q and a new one back", saves, first)
	}
	second := saves[1].answered

	downloads := t.TempDir()
	b.step("let the page download into a folder", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads})
		return err
	}))
	b.waitFor("the export button", `!document.getElementById('export-learner').disabled`)
	b.step("export Emma", chromedp.Click(chromedp.ID("export-learner")))
	b.waitFor("the export asked for", `!document.getElementById('export-learner').disabled &&
		!['', 'Preparing the export…'].includes(document.getElementById('export-status').textContent)`)
	exports := rec.made("GET /api/export")
	if len(exports) != 1 || exports[0].brought != second {
		t.Errorf("the export brought %+v, want the second save's token %q", exports, second)
	}
	b.noConsoleProblems()
}
