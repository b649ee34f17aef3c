package apptest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// Logs collects what the app (Options.Logs) or a child process logs, for a
// test to read. It is safe for concurrent use: the app logs a request after
// it has answered.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String is everything logged so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Tail is the end of what was logged, enough to see why something failed.
func (l *Logs) Tail() string {
	s := l.String()
	const keep = 6000
	if len(s) > keep {
		s = "…" + s[len(s)-keep:]
	}
	return s
}

// WaitFor returns what was logged once it holds want; the test fails when
// it does not within 5 s.
func (l *Logs) WaitFor(tb testing.TB, want string) string {
	tb.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		logged := l.String()
		if strings.Contains(logged, want) {
			return logged
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the log never held %q:\n%s", want, logged)
		}
	}
}
