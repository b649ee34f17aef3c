package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
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
	PurposeEmbeddings    = "embeddings"
)

// Outcomes of a model call, as the log names them.
const (
	callAnswered  = "answered"
	callFailed    = "failed"
	callCancelled = "cancelled"
)

// observed reports each request of a client, retries included, to o (nil:
// to nobody) and to log: how long it took to the last byte of its answer,
// the tokens the answer says it used, and how it ended. Never the text
// asked or answered, which is memory. A streamed answer is reported when
// the caller has read it to its end or closed it, with the usage its last
// chunk reports.
func observed(purpose string, o Observer, log *slog.Logger) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		start := time.Now()
		report := func(status int, tokens int64, outcome string) {
			took := time.Since(start)
			if outcome == callFailed && req.Context().Err() != nil {
				outcome = callCancelled
			}
			if o != nil {
				o.ObserveModelCall(purpose, took, tokens, outcome != callAnswered)
			}
			level := slog.LevelInfo
			if outcome == callFailed {
				level = slog.LevelWarn
			}
			log.Log(req.Context(), level, "model call", "purpose", purpose, "path", req.URL.Path, "status", status,
				"duration_ms", took.Milliseconds(), "tokens", tokens, "outcome", outcome)
		}
		resp, err := next(req)
		if err != nil {
			report(0, 0, callFailed)
			return resp, err
		}
		if resp.StatusCode >= http.StatusBadRequest {
			report(resp.StatusCode, 0, callFailed)
			return resp, err
		}
		if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media == "text/event-stream" {
			resp.Body = &observedStream{ReadCloser: resp.Body, report: func(tokens int64, failed bool) {
				outcome := callAnswered
				if failed {
					outcome = callFailed
				}
				report(resp.StatusCode, tokens, outcome)
			}}
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
		outcome := callAnswered
		if err != nil {
			outcome = callFailed
		}
		report(resp.StatusCode, answer.Usage.TotalTokens, outcome)
		return resp, err
	}
}

// observedStream is a streamed answer's body that reports the call once,
// when it is read to its end (or fails, or is closed before), with the
// tokens of the chunk that reports usage.
type observedStream struct {
	io.ReadCloser
	report   func(tokens int64, failed bool)
	line     []byte // the line being read, up to its newline
	tokens   int64
	reported bool
}

func (s *observedStream) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	for _, b := range p[:n] {
		if b != '\n' {
			s.line = append(s.line, b)
			continue
		}
		s.readUsage()
		s.line = s.line[:0]
	}
	if err != nil {
		s.once(err != io.EOF)
	}
	return n, err
}

// readUsage reads the usage a chunk's line reports, if it reports one:
// only the last chunk does, so the others are not decoded.
func (s *observedStream) readUsage() {
	data, ok := bytes.CutPrefix(s.line, []byte("data: "))
	if !ok || !bytes.Contains(data, []byte(`"total_tokens"`)) {
		return
	}
	var chunk struct {
		Usage struct {
			TotalTokens int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(data, &chunk) == nil && chunk.Usage.TotalTokens > 0 {
		s.tokens = chunk.Usage.TotalTokens
	}
}

func (s *observedStream) Close() error {
	// Closed before its end: the caller stopped reading (it was
	// cancelled, or found what it needed).
	s.once(s.tokens == 0)
	return s.ReadCloser.Close()
}

func (s *observedStream) once(failed bool) {
	if !s.reported {
		s.reported = true
		s.report(s.tokens, failed)
	}
}
