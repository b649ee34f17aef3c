// Package llm holds what the model adapters (summarizer, extractor,
// embedder, counselor) share: how the openai-go client is set up, and how a
// name is made safe to put in a prompt.
package llm

import (
	"fmt"
	"net/http"
	"strings"
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

// ClientConfig configures NewClient.
type ClientConfig struct {
	APIKey     string
	BaseURL    string        // any OpenAI-compatible server; empty = OpenAI's default
	Timeout    time.Duration // per request
	HTTPClient *http.Client  // optional
	MaxRetries int
	// MaxRetryDelay caps the wait between retries; zero keeps the client's
	// default.
	MaxRetryDelay time.Duration
}

// NewClient returns an openai-go client for an OpenAI-compatible server.
func NewClient(cfg ClientConfig) openai.Client {
	opts := []option.RequestOption{
		option.WithAPIKey(cfg.APIKey),
		option.WithRequestTimeout(cfg.Timeout),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMaxRetryDelay(cfg.MaxRetryDelay))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return openai.NewClient(opts...)
}

// NewBackgroundClient returns a client for background calls (summaries,
// extraction, embeddings) and the model to ask: model and timeout fall back
// to the adapter's defaults when empty.
func NewBackgroundClient(apiKey, baseURL, model string, timeout time.Duration, httpClient *http.Client,
	defaultModel string, defaultTimeout time.Duration) (openai.Client, string) {
	if model == "" {
		model = defaultModel
	}
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	return NewClient(ClientConfig{
		APIKey: apiKey, BaseURL: baseURL, Timeout: timeout, HTTPClient: httpClient,
		MaxRetries: BackgroundRetries, MaxRetryDelay: BackgroundMaxDelay,
	}), model
}

// QuotedName is a learner's name as prompts show it: one line, at most max
// characters, without quotes, angle brackets or backticks, so the name, which
// is data, cannot close a quotation or a tag and carry instructions of its
// own. It returns "" for an empty name.
func QuotedName(name string, max int) string {
	name = strings.Map(func(r rune) rune {
		if strings.ContainsRune("\"<>`", r) {
			return -1
		}
		return r
	}, strings.Join(strings.Fields(name), " "))
	if name == "" {
		return ""
	}
	if r := []rune(name); len(r) > max {
		name = string(r[:max])
	}
	return fmt.Sprintf("%q", name)
}
