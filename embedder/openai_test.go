package embedder

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mentormemory/llm"
	"mentormemory/llm/llmtest"
)

// embeddingRequest is what these tests read of an embeddings request; the
// model is checked by the tests every adapter must pass.
type embeddingRequest struct {
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

// embed is one call of the embedder with inputs texts from numbered.
func embed(inputs int) llmtest.CallFunc {
	return func(cfg llm.Config) (any, error) {
		return NewOpenAI(cfg).Embed(context.Background(), numbered(inputs))
	}
}

// adapter is the embedder as the tests every model adapter must pass see
// it.
var adapter = llmtest.Adapter{
	Path:         "/embeddings",
	DefaultModel: DefaultModel,
	Success: func(w http.ResponseWriter, _ *http.Request) {
		writeData(w, []item{{index: 0, vector: vectorFor("text-0")}})
	},
	Call: embed(1),
}

func TestOpenAIConfig(t *testing.T) { adapter.CheckConfig(t) }

func TestOpenAIServerFailures(t *testing.T) { adapter.CheckServerFailures(t) }

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

// embedNumbered embeds n texts from numbered through a server that answers
// with reply, checks that each text gets its own vector, and returns the
// server.
func embedNumbered(t *testing.T, reply replier, n int) *fakeOpenAI {
	t.Helper()
	f := newFakeOpenAI(t, reply)
	texts := numbered(n)
	got, err := newTestOpenAI(f, llm.Config{}).Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	checkVectors(t, texts, got)
	return f
}

func TestOpenAIRequest(t *testing.T) {
	texts := numbered(3)
	calls := embedNumbered(t, inOrder, len(texts)).Calls()
	if len(calls) != 1 {
		t.Fatalf("server got %d requests, want 1", len(calls))
	}
	c := calls[0]
	if !slices.Equal(c.Body.Input, texts) {
		t.Errorf("input = %q, want the texts as an array: %q", c.Body.Input, texts)
	}
	if c.Body.EncodingFormat != "float" {
		t.Errorf("encoding_format = %q, want float", c.Body.EncodingFormat)
	}
}

func TestOpenAIRestoresInputOrder(t *testing.T) { embedNumbered(t, shuffled, 10) }

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
			calls := embedNumbered(t, shuffled, tc.inputs).Calls()
			var sizes []int
			var sent []string
			for _, c := range calls {
				sizes = append(sizes, len(c.Body.Input))
				sent = append(sent, c.Body.Input...)
			}
			if !slices.Equal(sizes, tc.sizes) {
				t.Errorf("requests carried %v inputs, want %v", sizes, tc.sizes)
			}
			if !slices.Equal(sent, numbered(tc.inputs)) {
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

// Replies that reach the embedder but hold no vectors it can store.
func TestOpenAIFailures(t *testing.T) {
	cases := []struct {
		name   string
		inputs int // default 3
		reply  replier
		want   error
	}{
		{name: "fewer vectors than inputs", reply: data(item{0, []float64{1, 2}}, item{1, []float64{3, 4}}), want: ErrCountMismatch},
		{name: "more vectors than inputs", reply: data(item{0, []float64{1, 2}}, item{1, []float64{3, 4}}, item{2, []float64{5, 6}}, item{3, []float64{7, 8}}), want: ErrCountMismatch},
		{name: "repeated index", reply: data(item{0, []float64{1, 2}}, item{1, []float64{3, 4}}, item{1, []float64{5, 6}}), want: ErrBadIndex},
		{name: "empty vector", reply: data(item{0, []float64{1, 2}}, item{1, []float64{}}, item{2, []float64{5, 6}}), want: ErrEmptyVector},
		{name: "mixed dimensions in one request", reply: data(item{0, []float64{1, 2}}, item{1, []float64{3, 4, 5}}, item{2, []float64{6, 7}}), want: ErrDimensions},
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
		{name: "value beyond float32", reply: data(item{0, []float64{1, 2}}, item{1, []float64{3, 1e39}}, item{2, []float64{5, 6}}), want: ErrNonFinite},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOpenAI(t, tc.reply)
			if err := llmtest.Failed(t, f.URL, embed(cmp.Or(tc.inputs, 3))); !errors.Is(err, tc.want) {
				t.Errorf("error %v does not wrap %v", err, tc.want)
			}
		})
	}
}

// data answers every request with items.
func data(items ...item) replier {
	return func(w http.ResponseWriter, _ embeddingRequest) { writeData(w, items) }
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
