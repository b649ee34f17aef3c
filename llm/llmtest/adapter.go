package llmtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"mentormemory/llm"
	"mentormemory/mentor"
)

// Adapter is a model adapter as the tests that every adapter must pass see
// it.
type Adapter struct {
	// Path is the route the adapter posts to, such as /chat/completions.
	Path string
	// DefaultModel is the model the adapter asks when its config names none.
	DefaultModel string
	// Success answers Call so that it succeeds.
	Success http.HandlerFunc
	// Call makes one call through the adapter.
	Call CallFunc
}

// CallFunc makes one call through an adapter configured with cfg and
// returns what it returned besides the error.
type CallFunc func(cfg llm.Config) (any, error)

// modelRequest is the part of a request that every adapter's requests share.
type modelRequest struct {
	Model string `json:"model"`
}

// CheckConfig checks that the adapter uses its config: it posts to its
// route with the key as a Bearer token, asks the model the config names or
// else its default, and goes through the config's HTTP client.
func (a Adapter) CheckConfig(t *testing.T) {
	t.Run("key and model", func(t *testing.T) {
		s := New(t, a.Path, a.succeed)
		if _, err := a.Call(Config(s.URL, llm.Config{APIKey: "sk-secret-123", Model: "test-model-7"})); err != nil {
			t.Fatalf("call: %v", err)
		}
		calls := s.Calls()
		if len(calls) != 1 {
			t.Fatalf("server got %d requests, want 1", len(calls))
		}
		c := calls[0]
		if c.Method != http.MethodPost || c.Path != a.Path {
			t.Errorf("request = %s %s, want POST %s", c.Method, c.Path, a.Path)
		}
		if c.Auth != "Bearer sk-secret-123" {
			t.Errorf("Authorization = %q, want the API key as a Bearer token", c.Auth)
		}
		if c.Body.Model != "test-model-7" {
			t.Errorf("model = %q, want the configured test-model-7", c.Body.Model)
		}
	})
	t.Run("defaults and HTTP client", func(t *testing.T) {
		s := New(t, a.Path, a.succeed)
		var used atomic.Int32
		client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			used.Add(1)
			return http.DefaultTransport.RoundTrip(r)
		})}
		if _, err := a.Call(Config(s.URL, llm.Config{HTTPClient: client})); err != nil {
			t.Fatalf("call: %v", err)
		}
		if got := s.Calls()[0].Body.Model; got != a.DefaultModel {
			t.Errorf("model = %q, want the default %q", got, a.DefaultModel)
		}
		if used.Load() == 0 {
			t.Errorf("the configured HTTP client was not used")
		}
	})
}

func (a Adapter) succeed(w http.ResponseWriter, r *http.Request, _ modelRequest) { a.Success(w, r) }

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// CheckServerFailures checks that the adapter survives its server failing:
// an error status, a body that does not decode, and an answer slower than
// the timeout each fail the call as Failed expects; and a server that keeps
// failing is asked twice (one retry), never more.
func (a Adapter) CheckServerFailures(t *testing.T) {
	cases := []struct {
		name    string
		timeout time.Duration // zero: Failed's
		reply   http.HandlerFunc
		check   func(t *testing.T, err error)
	}{
		{
			name:  "server error",
			reply: serverError(http.StatusInternalServerError),
			check: func(t *testing.T, err error) {
				var apiErr *openai.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusInternalServerError {
					t.Errorf("error %v does not wrap the API's 500", err)
				}
			},
		},
		{
			name: "malformed JSON",
			reply: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"id": "x", "object": "list", "data": [{"index": 0, `)
			},
		},
		{
			name:    "timeout",
			timeout: 200 * time.Millisecond,
			reply: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
				a.Success(w, r)
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("error %v is not a deadline error", err)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t, a.Path, func(w http.ResponseWriter, r *http.Request, _ modelRequest) { tc.reply(w, r) })
			err := failed(t, Config(s.URL, llm.Config{Timeout: tc.timeout}), a.Call)
			if tc.check != nil {
				tc.check(t, err)
			}
		})
	}
	t.Run("retries at most once", func(t *testing.T) {
		s := New(t, a.Path, func(w http.ResponseWriter, r *http.Request, _ modelRequest) {
			serverError(http.StatusServiceUnavailable)(w, r)
		})
		failed(t, Config(s.URL, llm.Config{}), a.Call)
		if n := len(s.Calls()); n != 2 {
			t.Errorf("server was asked %d times, want 2 (one retry, no more)", n)
		}
	})
}

func serverError(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, status, map[string]any{"error": map[string]any{"message": "boom", "type": "server_error"}})
	}
}

// ReplyNoChoices answers a chat completion with no choice at all.
func ReplyNoChoices(w http.ResponseWriter, _ *http.Request) {
	WriteJSON(w, http.StatusOK, map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []any{}})
}

// Failed makes call through the server at url and checks what every
// adapter promises when its model fails: an error that classifies the
// failure as the model's, nothing returned beside it, and no long wait. It
// returns the error, for the checks of the failure at hand.
func Failed(t *testing.T, url string, call CallFunc) error {
	t.Helper()
	return failed(t, Config(url, llm.Config{}), call)
}

func failed(t *testing.T, cfg llm.Config, call CallFunc) error {
	t.Helper()
	if cfg.Timeout == 0 {
		// Longer than the retry back-off: the client waits for the retry
		// under the attempt's deadline, and a shorter one would turn a 500
		// into a deadline error.
		cfg.Timeout = 2 * time.Second
	}
	start := time.Now()
	got, err := call(cfg)
	elapsed := time.Since(start)
	if err == nil {
		t.Fatalf("call returned %v and no error", got)
	}
	if got != nil && !reflect.ValueOf(got).IsZero() {
		t.Errorf("call returned %v alongside the error", got)
	}
	if elapsed > 3*time.Second {
		t.Errorf("failure took %v; the caller must not wait long", elapsed)
	}
	if code := mentor.ErrorCode(err); code != mentor.CodeUpstream {
		t.Errorf("error code = %q, want %q", code, mentor.CodeUpstream)
	}
	return err
}
