package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// TestExportDownloadsTheLearnersArchive: "Export this learner" downloads
// Emma's archive as a file, which holds her and what is remembered about
// her, and nothing of the other learners; the general conversation has no
// learner to export.
func TestExportDownloadsTheLearnersArchive(t *testing.T) {
	d := startDemo(t, "export", "")
	b := d.b
	const fact = "Emma counts in fives when she is nervous."
	addMemory(t, d.svc, map[string]any{"type": "personal", "content": fact})
	downloads := t.TempDir()
	b.step("let the page download into a folder", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads})
		return err
	}))

	pickLearner(b, "General")
	b.waitFor("no learner to export", `document.getElementById('export-learner').disabled`)
	pickLearner(b, "Emma")
	// The panel's own reads done first, as a person would see them, so the
	// export does not queue behind them.
	b.waitFor("Emma's memories and export", fmt.Sprintf(`!document.getElementById('export-learner').disabled &&
		knownItem(%q) && document.getElementById('learning-now')?.textContent`, fact))
	b.step("export Emma", chromedp.Click(chromedp.ID("export-learner")))
	name := fmt.Sprintf("mentormemory-export-%s.jsonl", emmaID)
	b.waitFor("the export's end", `!document.getElementById('export-learner').disabled &&
		!['', 'Preparing the export…'].includes(document.getElementById('export-status').textContent)`)
	if said := b.text(`document.getElementById('export-status').textContent`); said != "Exported "+name+"." {
		t.Fatalf("the export says %q, want %q", said, "Exported "+name+".")
	}

	var file []byte
	for range 100 {
		var err error
		if file, err = os.ReadFile(filepath.Join(downloads, name)); err == nil && strings.Contains(string(file), `"type":"end"`) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	types := map[string]int{}
	scanner := bufio.NewScanner(strings.NewReader(string(file)))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		var record map[string]any
		if err := json.Unmarshal(scanner.Bytes(), &record); err != nil {
			t.Fatalf("a line of the file is not JSON: %q", scanner.Text())
		}
		types[record["type"].(string)]++
		if record["type"] == "learner" && record["name"] != "Emma" {
			t.Errorf("Emma's archive holds another learner: %v", record)
		}
	}
	if types["archive"] != 1 || types["end"] != 1 || types["learner"] != 1 || types["memory"] != 1 ||
		!strings.Contains(string(file), fact) {
		t.Fatalf("the downloaded archive (%d bytes): records %v", len(file), types)
	}
	b.screenshot("export-done", true)
	b.noConsoleProblems()
}
