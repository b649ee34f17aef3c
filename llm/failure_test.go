package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"mentormemory/llm"
	"mentormemory/llm/llmtest"
)

// memoryText stands for the turns a model was given; a failure may quote
// them back.
const memoryText = "Emma was diagnosed with dyslexia"

// ask makes one real call through openai-go to a fake model answering
// with reply, and returns the failure as the adapters report it.
func ask(t *testing.T, timeout time.Duration, reply http.HandlerFunc) error {
	t.Helper()
	model := llmtest.NewChat(t, reply)
	chat := llm.NewBackgroundChat(llmtest.Config(model.URL, llm.Config{Timeout: timeout}))
	_, err := chat.Ask(context.Background(), llm.Prompt{System: "Summarize.", User: memoryText})
	if err == nil {
		t.Fatal("the call did not fail")
	}
	return llm.Failure("The model failed", err)
}

// A failure says how the model failed, never what it or the request said,
// and still unwraps to its cause.
func TestFailuresLeaveOutTheModelsText(t *testing.T) {
	errorBody := func(w http.ResponseWriter, _ *http.Request) {
		llmtest.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": "Cannot process: " + memoryText, "type": "invalid_request_error", "code": memoryText,
		}})
	}
	slow := func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}
	cases := []struct {
		name string
		err  error
		want string
		is   error
	}{
		{"API error body", ask(t, 2*time.Second, errorBody), "model API status 400 type invalid_request_error", nil},
		{"timeout", ask(t, 100*time.Millisecond, slow), "timeout", context.DeadlineExceeded},
		{"refusal", llm.Failure("The model failed", fmt.Errorf("%w: %s", llm.ErrRefused, memoryText)), "refusal", llm.ErrRefused},
		{"anything else", llm.Failure("The model failed", errors.New(memoryText)), "model call failed", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.err.Error()
			if strings.Contains(text, "dyslexia") || !strings.HasSuffix(text, ": "+tc.want) {
				t.Errorf("failure reads %q, want it to end in %q and quote nothing", text, tc.want)
			}
			if tc.is != nil && !errors.Is(tc.err, tc.is) {
				t.Errorf("failure %q does not unwrap to %v", text, tc.is)
			}
		})
	}
	var apiErr *openai.Error
	if !errors.As(cases[0].err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		t.Errorf("the API's error is no longer reachable with errors.As")
	}
}
