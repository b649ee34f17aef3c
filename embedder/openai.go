// Package embedder turns text into vectors of meaning through an
// OpenAI-compatible embeddings API.
package embedder

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/openai/openai-go/v3"

	"mentormemory/llm"
	"mentormemory/mentor"
)

// Defaults for the model's llm.Config.
const (
	DefaultModel   = openai.EmbeddingModelTextEmbedding3Small
	DefaultTimeout = 10 * time.Second
)

// batchSize bounds the inputs of one request: the API caps inputs and
// tokens per request, and a smaller request fails and retries cheaper.
const batchSize = 64

// Errors a reply can fail with, besides transport and API errors. They are
// wrapped, so test with errors.Is.
var (
	ErrCountMismatch error = llm.Kind("model returned a different number of vectors than inputs")
	ErrBadIndex      error = llm.Kind("model returned a missing or repeated vector index")
	ErrEmptyVector   error = llm.Kind("model returned an empty vector")
	ErrDimensions    error = llm.Kind("model returned vectors of differing dimensions")
	ErrNonFinite     error = llm.Kind("model returned a value that is not a finite float32")
)

// OpenAI is the model-backed embedder. It is safe for concurrent use.
type OpenAI struct {
	client openai.Client
	model  string
}

// NewOpenAI returns the model-backed embedder.
func NewOpenAI(cfg llm.Config) *OpenAI {
	cfg = cfg.WithDefaults(DefaultModel, DefaultTimeout)
	return &OpenAI{client: llm.NewBackgroundClient(cfg), model: cfg.Model}
}

var _ mentor.Embedder = (*OpenAI)(nil)

// Model implements mentor.Embedder: the model every vector comes from.
func (e *OpenAI) Model() string { return e.model }

// Embed implements mentor.Embedder. It returns one vector per text, in the
// order of texts, all of one dimension; inputs beyond one batch are sent in
// several requests. Every failure is a *mentor.Error with code
// CodeUpstream that wraps the cause, and no vectors are returned with it.
func (e *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vectors := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batchSize {
		batch := texts[start:min(start+batchSize, len(texts))]
		got, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, upstream(fmt.Errorf("inputs %d–%d: %w", start, start+len(batch)-1, err))
		}
		vectors = append(vectors, got...)
	}
	// Checked over all batches: vectors of one call are compared with each
	// other, so a server that changes dimension midway must not slip through.
	for i, v := range vectors {
		if len(v) != len(vectors[0]) {
			return nil, upstream(fmt.Errorf("%w: input 0 has %d, input %d has %d", ErrDimensions, len(vectors[0]), i, len(v)))
		}
	}
	return vectors, nil
}

// embedBatch makes one request and returns its vectors in input order.
func (e *OpenAI) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	resp, err := e.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model:          e.model,
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: batch},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	})
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	if len(resp.Data) != len(batch) {
		return nil, fmt.Errorf("%w: %d vectors for %d inputs", ErrCountMismatch, len(resp.Data), len(batch))
	}
	// The API does not promise to answer in input order; index does.
	data := slices.SortedFunc(slices.Values(resp.Data), func(a, b openai.Embedding) int { return cmp.Compare(a.Index, b.Index) })
	vectors := make([][]float32, len(data))
	for i, d := range data {
		if d.Index != int64(i) {
			return nil, fmt.Errorf("%w: position %d holds index %d", ErrBadIndex, i, d.Index)
		}
		v, err := toFloat32(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		vectors[i] = v
	}
	return vectors, nil
}

// toFloat32 narrows a vector to the precision it is stored in. A value
// too large for float32 would become infinite and poison every distance
// computed with it, so it is refused like NaN and infinity.
func toFloat32(v []float64) ([]float32, error) {
	if len(v) == 0 {
		return nil, ErrEmptyVector
	}
	out := make([]float32, len(v))
	for i, x := range v {
		f := float32(x)
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("%w: %v at position %d", ErrNonFinite, x, i)
		}
		out[i] = f
	}
	return out, nil
}

func upstream(cause error) error {
	return llm.Failure("The embedding model failed", cause)
}
