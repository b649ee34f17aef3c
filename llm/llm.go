// Package llm holds what the model adapters (summarizer, extractor,
// embedder, counselor) share: how the openai-go client is set up, how a
// failure is reported, how a background task asks a chat model, and how
// data is fenced off in a prompt.
package llm

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Background model calls (summaries, extraction, embeddings) run after the
// person's data is stored, and a failure only costs something the next
// attempt catches up, so nobody should wait long for them: one retry at
// most (a dropped connection or a 5xx is often transient), and no long
// back-off even if the server asks for one.
const (
	BackgroundRetries  = 1
	BackgroundMaxDelay = time.Second
)

// Config is how a model adapter reaches its model. The summarizer, the
// extractor, the embedder and the counselor all take it, so one set of
// settings (config.Model) configures them all.
type Config struct {
	APIKey     string
	BaseURL    string        // any OpenAI-compatible server; empty = OpenAI's default
	Model      string        // empty: the adapter's default
	Timeout    time.Duration // per request; zero: the adapter's default
	HTTPClient *http.Client  // optional
	// Budget, when set, is charged for every chat completion (see
	// Complete).
	Budget Budget
	// Logger, when set, hears of every model call (see observed), of what
	// a background task asks a model, at debug level and cut short (see
	// Chat.Ask), and of what it drops from a reply, without its text. Nil
	// logs nothing.
	Logger *slog.Logger
	// Observer, when set, hears of every request made for Purpose (one of
	// the Purpose constants); the log hears of each at info level, a
	// failed one at warn.
	Observer Observer
	Purpose  string
}

// For is c as the adapter asking for purpose configures it, reporting to
// observer (nil: to nobody) and logging to log.
func (c Config) For(purpose string, observer Observer, log *slog.Logger) Config {
	c.Purpose, c.Observer, c.Logger = purpose, observer, log
	return c
}

// WithDefaults fills in the model and the timeout when they are not set.
func (c Config) WithDefaults(model string, timeout time.Duration) Config {
	if c.Model == "" {
		c.Model = model
	}
	if c.Timeout <= 0 {
		c.Timeout = timeout
	}
	return c
}

// NewChatClient returns a client for a call someone waits on (the
// counselor's reply): one retry, with the client's own back-off.
func NewChatClient(c Config) openai.Client {
	return newClient(c, option.WithMaxRetries(1))
}

// NewBackgroundClient returns a client for background calls (summaries,
// extraction, embeddings): see BackgroundRetries.
func NewBackgroundClient(c Config) openai.Client {
	return newClient(c, option.WithMaxRetries(BackgroundRetries), option.WithMaxRetryDelay(BackgroundMaxDelay))
}

func newClient(c Config, retries ...option.RequestOption) openai.Client {
	opts := append([]option.RequestOption{option.WithAPIKey(c.APIKey), option.WithRequestTimeout(c.Timeout)}, retries...)
	if c.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(c.BaseURL))
	}
	if c.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(c.HTTPClient))
	}
	opts = append(opts, option.WithMiddleware(observed(c.Purpose, c.Observer, LoggerOf(c))))
	return openai.NewClient(opts...)
}
