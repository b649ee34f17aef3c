package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"mentormemory/llm"
	"mentormemory/llm/llmtest"
)

// A background prompt is logged at debug level only, and only its start:
// the rest of it is memory text.
func TestPromptsAreLoggedCutShortAtDebugLevel(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("ok", "stop"))
	prompt := "Summarize this conversation. " + strings.Repeat("Emma reads every evening. ", 40) + "THE-END"
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		var logs bytes.Buffer
		logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: level}))
		chat := llm.NewBackgroundChat(llmtest.Config(model.URL, llm.Config{Logger: logger}))
		if _, err := chat.Ask(context.Background(), llm.Prompt{System: "You summarize.", User: prompt}); err != nil {
			t.Fatal(err)
		}
		if level > slog.LevelDebug {
			// It hears of the call, not of what was asked.
			if strings.Contains(logs.String(), "Emma reads") || !strings.Contains(logs.String(), `"msg":"model call"`) {
				t.Errorf("a logger at %v heard the prompt or not the call:\n%s", level, logs.String())
			}
			continue
		}
		var line struct {
			Level, Msg string
			UserStart  string `json:"user_start"`
			UserChars  int    `json:"user_chars"`
		}
		first, _, _ := bytes.Cut(logs.Bytes(), []byte("\n"))
		if err := json.Unmarshal(first, &line); err != nil {
			t.Fatalf("a log line expected: %v\n%s", err, logs.String())
		}
		if line.Level != "DEBUG" || line.Msg != "model prompt" || line.UserChars != utf8.RuneCountInString(prompt) {
			t.Errorf("log line %+v", line)
		}
		if n := utf8.RuneCountInString(line.UserStart); !strings.HasPrefix(line.UserStart, "Summarize this conversation.") || n > 201 ||
			strings.Contains(logs.String(), "THE-END") {
			t.Errorf("the prompt is logged %d characters long, want its start only: %q", n, line.UserStart)
		}
	}
}
