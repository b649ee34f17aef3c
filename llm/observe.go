package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3/option"
)

// Observer hears of every request a model adapter makes (package
// metrics counts them for the operator).
type Observer interface {
	ObserveModelCall(purpose string, took time.Duration, tokens int64, failed bool)
}

// Why a model is asked, as the metrics name it.
const (
	PurposeSummary       = "summary"
	PurposeExtraction    = "extraction"
	PurposeConsolidation = "consolidation"
	PurposeCounselor     = "counselor"
	PurposeClosing       = "closing"
	PurposeEmbeddings    = "embeddings"
)

// observed reports each request of a client to o: how long it took to the
// last byte of its answer, the tokens the answer says it used, and whether
// it failed. A streamed answer is reported when its headers arrive, with
// no tokens: its body is the caller's to read as it comes.
func observed(purpose string, o Observer) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		start := time.Now()
		resp, err := next(req)
		if err != nil || resp.StatusCode >= http.StatusBadRequest {
			o.ObserveModelCall(purpose, time.Since(start), 0, true)
			return resp, err
		}
		if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media == "text/event-stream" {
			o.ObserveModelCall(purpose, time.Since(start), 0, false)
			return resp, nil
		}
		// The answer is read here, whole (a completion's or an embedding's
		// JSON, bounded by the model), and handed on as it was.
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var answer struct {
			Usage struct {
				TotalTokens int64 `json:"total_tokens"`
			} `json:"usage"`
		}
		_ = json.Unmarshal(body, &answer)
		o.ObserveModelCall(purpose, time.Since(start), answer.Usage.TotalTokens, err != nil)
		return resp, err
	}
}
