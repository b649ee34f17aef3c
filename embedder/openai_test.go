package embedder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"mentormemory/llm"
	"mentormemory/llm/llmtest"
	"mentormemory/memory"
)

// embeddingRequest is what an embeddings request carries.
type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// replier answers one embeddings request.
type replier func(w http.ResponseWriter, req embeddingRequest)

// fakeOpenAI is the stand-in OpenAI server of these tests.
type fakeOpenAI = llmtest.Server[embeddingRequest]

// newFakeOpenAI starts a server whose POST /embeddings is answered by
// reply.
func newFakeOpenAI(t *testing.T, reply replier) *fakeOpenAI {
	return llmtest.New(t, "/embeddings", func(w http.ResponseWriter, _ *http.Request, req embeddingRequest) { reply(w, req) })
}

func newTestOpenAI(f *fakeOpenAI, cfg llm.Config) *OpenAI {
	return NewOpenAI(llmtest.Config(f.URL, cfg))
}

// item is one entry of a reply's data array.
type item struct {
	index  int
	vector []float64
}

func writeData(w http.ResponseWriter, items []item) {
	data := make([]any, len(items))
	for i, it := range items {
		data[i] = map[string]any{"object": "embedding", "index": it.index, "embedding": it.vector}
	}
	llmtest.WriteJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   data,
		"model":  "fake-embedding-model",
		"usage":  map[string]any{"prompt_tokens": 5, "total_tokens": 5},
	})
}

// numbered returns n distinct texts whose vectors vectorFor can tell apart.
func numbered(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("text-%d", i)
	}
	return texts
}

// vectorFor is the vector the fake server gives a text from numbered: it
// depends on the text alone, so a vector in the wrong place shows.
func vectorFor(text string) []float64 {
	n, err := strconv.Atoi(strings.TrimPrefix(text, "text-"))
	if err != nil {
		n = -1
	}
	return []float64{float64(n), 0.5, -1}
}

// inOrder answers with every input's vector, in input order.
func inOrder(w http.ResponseWriter, req embeddingRequest) {
	items := make([]item, len(req.Input))
	for i, text := range req.Input {
		items[i] = item{index: i, vector: vectorFor(text)}
	}
	writeData(w, items)
}

// shuffled answers with every input's vector, the data array in an order
// other than the inputs', so only the index field tells them apart.
func shuffled(w http.ResponseWriter, req embeddingRequest) {
	order := rand.New(rand.NewPCG(1, 2)).Perm(len(req.Input))
	if slices.IsSorted(order) {
		slices.Reverse(order)
	}
	items := make([]item, len(order))
	for k, i := range order {
		items[k] = item{index: i, vector: vectorFor(req.Input[i])}
	}
	writeData(w, items)
}

// checkVectors fails unless got holds vectorFor of each text, in order.
func checkVectors(t *testing.T, texts []string, got [][]float32) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(texts))
	}
	for i, text := range texts {
		want := vectorFor(text)
		if len(got[i]) != len(want) {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(got[i]), len(want))
		}
		for j := range want {
			if got[i][j] != float32(want[j]) {
				t.Fatalf("vector %d = %v, want the vector of %q: %v", i, got[i], text, want)
			}
		}
	}
}

func TestOpenAIModel(t *testing.T) {
	if got := NewOpenAI(llm.Config{APIKey: "k"}).Model(); got != DefaultModel {
		t.Errorf("Model() = %q, want the default %q", got, DefaultModel)
	}
	if got := NewOpenAI(llm.Config{APIKey: "k", Model: "embed-v9"}).Model(); got != "embed-v9" {
		t.Errorf("Model() = %q, want the configured embed-v9", got)
	}
}

func TestOpenAIRequest(t *testing.T) {
	f := newFakeOpenAI(t, inOrder)
	e := newTestOpenAI(f, llm.Config{APIKey: "sk-secret-123", Model: "embed-test-3"})
	texts := numbered(3)
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	checkVectors(t, texts, got)

	calls := f.Calls()
	if len(calls) != 1 {
		t.Fatalf("server got %d requests, want 1", len(calls))
	}
	c := calls[0]
	if c.Method != http.MethodPost || c.Path != "/embeddings" {
		t.Errorf("request = %s %s, want POST /embeddings", c.Method, c.Path)
	}
	if c.Auth != "Bearer sk-secret-123" {
		t.Errorf("Authorization = %q, want the API key as a Bearer token", c.Auth)
	}
	if c.Body.Model != "embed-test-3" {
		t.Errorf("model = %q, want the configured embed-test-3", c.Body.Model)
	}
	if !slices.Equal(c.Body.Input, texts) {
		t.Errorf("input = %q, want the texts as an array: %q", c.Body.Input, texts)
	}
	if c.Body.EncodingFormat != "float" {
		t.Errorf("encoding_format = %q, want float", c.Body.EncodingFormat)
	}
}

func TestOpenAIDefaultsAndHTTPClient(t *testing.T) {
	f := newFakeOpenAI(t, inOrder)
	tr := &countingTransport{}
	e := newTestOpenAI(f, llm.Config{HTTPClient: &http.Client{Transport: tr}})
	if _, err := e.Embed(context.Background(), numbered(1)); err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if got := f.Calls()[0].Body.Model; got != DefaultModel {
		t.Errorf("model = %q, want the default %q", got, DefaultModel)
	}
	if tr.n.Load() == 0 {
		t.Errorf("the configured HTTP client was not used")
	}
}

type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestOpenAIRestoresInputOrder(t *testing.T) {
	f := newFakeOpenAI(t, shuffled)
	texts := numbered(10)
	got, err := newTestOpenAI(f, llm.Config{}).Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	checkVectors(t, texts, got)
}

func TestOpenAIBatches(t *testing.T) {
	// Literal sizes, not batchSize: the limit is what is under test.
	cases := []struct {
		inputs int
		sizes  []int // inputs per request, in order
	}{
		{inputs: 1, sizes: []int{1}},
		{inputs: 64, sizes: []int{64}},
		{inputs: 65, sizes: []int{64, 1}},
		{inputs: 150, sizes: []int{64, 64, 22}},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.inputs), func(t *testing.T) {
			f := newFakeOpenAI(t, shuffled)
			texts := numbered(tc.inputs)
			got, err := newTestOpenAI(f, llm.Config{}).Embed(context.Background(), texts)
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			checkVectors(t, texts, got)

			calls := f.Calls()
			var sizes []int
			var sent []string
			for _, c := range calls {
				sizes = append(sizes, len(c.Body.Input))
				sent = append(sent, c.Body.Input...)
			}
			if !slices.Equal(sizes, tc.sizes) {
				t.Errorf("requests carried %v inputs, want %v", sizes, tc.sizes)
			}
			if !slices.Equal(sent, texts) {
				t.Errorf("the requests together did not send every text once, in order")
			}
		})
	}
}

func TestOpenAIEmptyInputMakesNoRequest(t *testing.T) {
	f := newFakeOpenAI(t, inOrder)
	e := newTestOpenAI(f, llm.Config{})
	for _, texts := range [][]string{nil, {}} {
		got, err := e.Embed(context.Background(), texts)
		if got != nil || err != nil {
			t.Errorf("Embed(%#v) = %v, %v; want nil, nil", texts, got, err)
		}
	}
	if n := len(f.Calls()); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

func TestOpenAIFailures(t *testing.T) {
	cases := []struct {
		name    string
		inputs  int           // default 3
		timeout time.Duration // default 2s: ample for a fake server, short if one hangs
		reply   replier
		want    error // a sentinel the error must wrap, if any
		check   func(t *testing.T, err error)
	}{
		{
			name: "fewer vectors than inputs",
			reply: func(w http.ResponseWriter, req embeddingRequest) {
				writeData(w, []item{{0, []float64{1, 2}}, {1, []float64{3, 4}}})
			},
			want: ErrCountMismatch,
		},
		{
			name: "more vectors than inputs",
			reply: func(w http.ResponseWriter, req embeddingRequest) {
				writeData(w, []item{{0, []float64{1, 2}}, {1, []float64{3, 4}}, {2, []float64{5, 6}}, {3, []float64{7, 8}}})
			},
			want: ErrCountMismatch,
		},
		{
			name: "repeated index",
			reply: func(w http.ResponseWriter, req embeddingRequest) {
				writeData(w, []item{{0, []float64{1, 2}}, {1, []float64{3, 4}}, {1, []float64{5, 6}}})
			},
			want: ErrBadIndex,
		},
		{
			name: "empty vector",
			reply: func(w http.ResponseWriter, req embeddingRequest) {
				writeData(w, []item{{0, []float64{1, 2}}, {1, []float64{}}, {2, []float64{5, 6}}})
			},
			want: ErrEmptyVector,
		},
		{
			name: "mixed dimensions in one request",
			reply: func(w http.ResponseWriter, req embeddingRequest) {
				writeData(w, []item{{0, []float64{1, 2}}, {1, []float64{3, 4, 5}}, {2, []float64{6, 7}}})
			},
			want: ErrDimensions,
		},
		{
			name:   "mixed dimensions across requests",
			inputs: 65,
			reply: func(w http.ResponseWriter, req embeddingRequest) {
				items := make([]item, len(req.Input))
				for i := range items {
					// The second request's vectors are one dimension longer.
					items[i] = item{index: i, vector: make([]float64, 3+len(req.Input)%64)}
					items[i].vector[0] = 1
				}
				writeData(w, items)
			},
			want: ErrDimensions,
		},
		{
			name: "value beyond float32",
			reply: func(w http.ResponseWriter, req embeddingRequest) {
				writeData(w, []item{{0, []float64{1, 2}}, {1, []float64{3, 1e39}}, {2, []float64{5, 6}}})
			},
			want: ErrNonFinite,
		},
		{
			name: "server error",
			reply: func(w http.ResponseWriter, req embeddingRequest) {
				llmtest.WriteJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]any{"message": "boom", "type": "server_error"}})
			},
			check: func(t *testing.T, err error) {
				var apiErr *openai.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusInternalServerError {
					t.Errorf("error %v does not wrap the API's 500", err)
				}
			},
		},
		{
			name: "malformed JSON",
			reply: func(w http.ResponseWriter, req embeddingRequest) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"object": "list", "data": [{"index": 0, "embedding": [`)
			},
		},
		{
			name:    "timeout",
			timeout: 200 * time.Millisecond,
			reply: func(w http.ResponseWriter, req embeddingRequest) {
				time.Sleep(500 * time.Millisecond)
				inOrder(w, req)
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
			f := newFakeOpenAI(t, tc.reply)
			timeout := tc.timeout
			if timeout == 0 {
				// Longer than the retry back-off: the SDK waits for the
				// retry under the attempt's deadline, and a shorter one
				// would turn the 500 into a deadline error.
				timeout = 2 * time.Second
			}
			inputs := tc.inputs
			if inputs == 0 {
				inputs = 3
			}
			start := time.Now()
			got, err := newTestOpenAI(f, llm.Config{Timeout: timeout}).Embed(context.Background(), numbered(inputs))
			elapsed := time.Since(start)
			if err == nil {
				t.Fatalf("Embed returned %d vectors and no error", len(got))
			}
			if got != nil {
				t.Errorf("Embed returned %d vectors alongside the error", len(got))
			}
			if elapsed > 3*time.Second {
				t.Errorf("failure took %v; the caller must not wait long", elapsed)
			}
			if code := memory.ErrorCode(err); code != memory.CodeUpstream {
				t.Errorf("error code = %q, want %q", code, memory.CodeUpstream)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v does not wrap %v", err, tc.want)
			}
			if tc.check != nil {
				tc.check(t, err)
			}
		})
	}
}

// One retry at most: a failing server is asked twice, never three times.
func TestOpenAIRetriesAtMostOnce(t *testing.T) {
	var hits atomic.Int32
	f := newFakeOpenAI(t, func(w http.ResponseWriter, req embeddingRequest) {
		hits.Add(1)
		llmtest.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"error": map[string]any{"message": "busy"}})
	})
	if _, err := newTestOpenAI(f, llm.Config{}).Embed(context.Background(), numbered(1)); err == nil {
		t.Fatal("want an error from a server that always fails")
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("server was asked %d times, want 2 (one retry, no more)", n)
	}
}

// A failed request ends the call: later batches are not sent for nothing.
func TestOpenAIStopsAtFailedBatch(t *testing.T) {
	f := newFakeOpenAI(t, func(w http.ResponseWriter, req embeddingRequest) {
		writeData(w, nil)
	})
	if _, err := newTestOpenAI(f, llm.Config{}).Embed(context.Background(), numbered(129)); !errors.Is(err, ErrCountMismatch) {
		t.Fatalf("Embed error = %v, want ErrCountMismatch", err)
	}
	if n := len(f.Calls()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}
