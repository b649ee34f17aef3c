package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

const (
	// wholeTest bounds one test, browser start included.
	wholeTest = 60 * time.Second
	// stepLimit bounds every single wait.
	stepLimit = 15 * time.Second
)

// chromiumPath finds the browser, or ends the test: failing under CI=true,
// where a skipped browser test would pass for nothing, skipping elsewhere.
func chromiumPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHROMIUM_BIN")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		return path
	}
	msg := fmt.Sprintf("Chromium not found at %s: install it with `apt-get install -y chromium fonts-dejavu-core` "+
		"(scripts/test.sh does), or point CHROMIUM_BIN at a Chromium or Chrome binary", path)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser is one headless Chromium with one tab, and what its page wrote
// to the console.
type browser struct {
	t      *testing.T
	ctx    context.Context
	shots  string
	prefix string
	n      int

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// startBrowser starts Chromium with a fresh profile. Screenshots are named
// prefix-NN-step.png in test-artifacts/e2e/.
func startBrowser(t *testing.T, prefix string) *browser {
	t.Helper()
	chromium := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), wholeTest)
	t.Cleanup(cancel)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox, // root in a container: the sandbox cannot start
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// Containers often give /dev/shm 64 MB, too little for a renderer.
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()), // no storage or cache from another run
		chromedp.WindowSize(1280, 900),
	)
	tab, closeTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	// Cleanups run last-in first-out: the tab, then the browser, then the
	// profile directory the browser no longer writes to.
	t.Cleanup(cancelAlloc)
	t.Cleanup(closeTab)

	b := &browser{t: t, ctx: tab, shots: artifactDir(t), prefix: prefix}
	// Subscribing starts the browser; it lives as long as tab, and every
	// step below has its own timeout.
	messages := chromedp.Console(tab)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start Chromium (%s): %v", chromium, err)
	}
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	return b
}

func (b *browser) consoleText() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var s strings.Builder
	for _, m := range b.console {
		fmt.Fprintf(&s, "  %s (%s:%d)\n", m, m.URL, m.Line)
	}
	return s.String()
}

// step runs actions with a deadline; on failure it keeps a screenshot and
// the page's console for the diagnosis.
func (b *browser) step(name string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepLimit)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.screenshot("failed-"+slug(name), false)
		b.t.Fatalf("%s: %v\nbrowser console:\n%s", name, err, b.consoleText())
	}
}

// waitFor polls a JavaScript expression until it is truthy.
func (b *browser) waitFor(what, expression string) {
	b.t.Helper()
	b.step("wait for "+what, chromedp.Poll[chromedp.Void](expression,
		chromedp.WithPollingTimeout(stepLimit-time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
}

// text evaluates a JavaScript expression that yields a string.
func (b *browser) text(expression string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepLimit)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expression))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expression, err)
	}
	return s
}

// screenshot saves the viewport, or with full the whole page, as PNG.
func (b *browser) screenshot(name string, full bool) {
	b.t.Helper()
	b.n++
	ctx, cancel := context.WithTimeout(b.ctx, stepLimit)
	defer cancel()
	action := chromedp.CaptureScreenshot()
	if full {
		action = chromedp.FullScreenshot(100) // quality 100 is PNG
	}
	png, err := chromedp.Run(ctx, action)
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	file := filepath.Join(b.shots, fmt.Sprintf("%s-%02d-%s.png", b.prefix, b.n, name))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
	}
}

// noConsoleProblems fails on any exception, error or warning the page
// logged: a CSP violation, a failed load or a console.warn from a failed
// background save all show up there. expected lists the URLs whose failed
// loads the test caused on purpose (Chromium logs every 4xx and 5xx).
func (b *browser) noConsoleProblems(expected ...string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
next:
	for _, m := range b.console {
		if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException && m.Type != chromedp.ConsoleWarning {
			continue
		}
		for _, url := range expected {
			if m.Source == "network" && strings.Contains(m.URL, url) {
				continue next
			}
		}
		b.t.Errorf("browser console: %s (%s:%d, source %q)", m, m.URL, m.Line, m.Source)
	}
}

// pressEnter presses Enter as a keyboard does: one keyDown that carries the
// text, so the page's preventDefault keeps the newline out. SendKeys sends
// the text as a separate "char" event, which no keyboard does and no page
// can prevent.
func pressEnter() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		key := input.DispatchKeyEventParams{Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
		down, up := key, key
		down.Type, down.Text, down.UnmodifiedText = input.DispatchKeyEventTypeKeyDown, "\r", "\r"
		up.Type = input.DispatchKeyEventTypeKeyUp
		for _, event := range []input.DispatchKeyEventParams{down, up} {
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, event); err != nil {
				return err
			}
		}
		return nil
	})
}

// setField sets a field's value as a paste would. chromedp.Clear resets
// only the value attribute, which a field the user typed in ignores, and
// chromedp.SetValue refuses the empty string.
func setField(id, value string) chromedp.Action[chromedp.Void] {
	quoted, _ := json.Marshal(value)
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const field = document.getElementById(%q);
		field.value = %s;
		field.dispatchEvent(new Event('input', { bubbles: true }));
	})()`, id, quoted))
}

var (
	artifactsOnce sync.Once
	artifacts     string
	artifactsErr  error
)

// artifactDir is test-artifacts/e2e/ at the repository root, emptied once
// per run so that every screenshot there is from this run.
func artifactDir(t *testing.T) string {
	t.Helper()
	artifactsOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			artifactsErr = err
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				artifactsErr = errors.New("no go.mod above the test's directory")
				return
			}
			dir = parent
		}
		artifacts = filepath.Join(dir, "test-artifacts", "e2e")
		if err := os.RemoveAll(artifacts); err != nil {
			artifactsErr = err
			return
		}
		artifactsErr = os.MkdirAll(artifacts, 0o755)
	})
	if artifactsErr != nil {
		t.Fatal(artifactsErr)
	}
	return artifacts
}

func slug(s string) string {
	return strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(s), "-"), "-")
}
