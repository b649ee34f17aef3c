package bench

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"mentormemory/llm/llmtest"
	"mentormemory/mentor"
)

// fakeModel is an OpenAI-compatible chat server in this process standing
// in for a slow model: it answers every chat completion after latency.
// Summary requests get a summary; extraction requests, the ones asking for
// structured output, get no memories, a valid reply and what a model
// answers for most exchanges.
type fakeModel struct {
	srv         *httptest.Server
	latency     time.Duration
	seed        uint64
	calls       atomic.Uint64
	summaries   atomic.Int64
	extractions atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
}

func newFakeModel(latency time.Duration, seed uint64) *fakeModel {
	m := &fakeModel{latency: latency, seed: seed}
	m.srv = httptest.NewServer(m) // on 127.0.0.1
	return m
}

func (m *fakeModel) url() string { return m.srv.URL }

func (m *fakeModel) close() { m.srv.Close() }

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req llmtest.ChatRequest
	if err != nil || r.Method != http.MethodPost || r.URL.Path != "/chat/completions" || json.Unmarshal(body, &req) != nil {
		http.NotFound(w, r)
		return
	}
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for { // raise the maximum unless another call raised it past n meanwhile
		seen := m.maxInFlight.Load()
		if n <= seen || m.maxInFlight.CompareAndSwap(seen, n) {
			break
		}
	}
	if !sleep(r.Context(), m.latency) {
		return
	}
	content := `{"memories": []}`
	if schema, _ := req.ResponseFormat["json_schema"].(map[string]any); schema["name"] == "session_closing" {
		content = `{"goodbye": "Good work today.", "summary": "A session."}`
	} else if req.ResponseFormat != nil { // extraction asks for structured output too
		m.extractions.Add(1)
	} else {
		m.summaries.Add(1)
		content = m.summary()
	}
	llmtest.ReplyContent(content, "stop")(w, r)
}

// summary writes a different summary each call, two of the mentor's
// replies on one topic (4 to 10 sentences), so that the summaries search
// indexes vary as real ones do.
func (m *fakeModel) summary() string {
	g := &textGen{r: rand.New(rand.NewPCG(m.seed, m.calls.Add(1)))}
	t := g.newTopic()
	return g.turn(mentor.RoleAssistant, t, "", 10) + " " + g.turn(mentor.RoleAssistant, t, "", 10)
}
