package postgres_test

// The recall quality test: one learner's hand-labelled memories
// (testdata/recall_labelled.json) are added through the service, and each
// labelled message is recalled by words alone and by words and meaning.
// A hit is the labelled memory at the top of its type's group.
//
//	DATABASE_URL='postgres://postgres@127.0.0.1:54330/postgres?sslmode=disable' \
//	    go test -count=1 -run RecallQuality -v ./postgres/
//
// The embedding model is a fake OpenAI-compatible server with fixed
// vectors: every text is given, by hand, the concepts it is about (one
// axis each), which is what a real model captures; the labels play no part
// in the vectors. A memory also has an axis of its own for the details no
// other text shares, so no two memories are the same meaning (and none
// merges into another when added).
//
// Context memories are in the set but no message is labelled with one:
// recall returns the newest continuity memories whatever the message, so
// there is no ranking of them to measure.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/embedder"
	"mentormemory/llm"
	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
	"mentormemory/summarizer"
)

// minHybridHitAt1 is the share of labelled messages whose memory recall by
// words and meaning must rank first of its group.
const minHybridHitAt1 = 0.9

// detailWeight is a memory's component on its own axis. Two memories about
// exactly the same concepts then have cosine 1/(1+0.4²) ≈ 0.86, under the
// 0.90 at which adding the second would merge it into the first.
const detailWeight = 0.4

type labelledSet struct {
	Learner  string           `json:"learner"`
	Concepts []string         `json:"concepts"`
	Memories []labelledMemory `json:"memories"`
	Queries  []labelledQuery  `json:"queries"`
}

type labelledMemory struct {
	Key        string             `json:"key"`
	Type       mentor.MemoryType  `json:"type"`
	Content    string             `json:"content"`
	Importance float64            `json:"importance"`
	Topic      string             `json:"topic"`
	NextTopic  string             `json:"next_topic"`
	Emotion    string             `json:"emotion"`
	Concepts   map[string]float64 `json:"concepts"`
}

type labelledQuery struct {
	Message string `json:"message"`
	// Relevant is the key of the memory the message should bring up.
	Relevant string `json:"relevant"`
	// Paraphrase says the message shares no word with the relevant
	// memory (nor with its topic): only meaning can find it.
	Paraphrase bool               `json:"paraphrase"`
	Concepts   map[string]float64 `json:"concepts"`
}

func loadLabelledSet(t *testing.T) labelledSet {
	t.Helper()
	raw, err := os.ReadFile("testdata/recall_labelled.json")
	if err != nil {
		t.Fatal(err)
	}
	var set labelledSet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatalf("recall_labelled.json: %v", err)
	}
	memories := map[string]labelledMemory{}
	for _, m := range set.Memories {
		if _, dup := memories[m.Key]; dup {
			t.Fatalf("memory key %q is used twice", m.Key)
		}
		memories[m.Key] = m
	}
	for _, q := range set.Queries {
		m, ok := memories[q.Relevant]
		if !ok || m.Type == mentor.Context {
			t.Fatalf("%q is labelled with %q, which is no academic, personal or preference memory", q.Message, q.Relevant)
		}
		// A feeling in the message would add emotional patterns and
		// measure something else.
		if emotions := mentor.EmotionsIn(q.Message); len(emotions) > 0 {
			t.Fatalf("%q shows a feeling (%v); the set measures ranking alone", q.Message, emotions)
		}
	}
	return set
}

// vector is a text's point in concept space: its concepts, then one
// detail axis per memory (detail < 0 for none).
func (set labelledSet) vector(t *testing.T, concepts map[string]float64, detail int) []float64 {
	t.Helper()
	v := make([]float64, len(set.Concepts)+len(set.Memories))
	for name, weight := range concepts {
		axis := slices.Index(set.Concepts, name)
		if axis < 0 {
			t.Fatalf("concept %q is not in the concept list", name)
		}
		v[axis] = weight
	}
	if detail >= 0 {
		v[len(set.Concepts)+detail] = detailWeight
	}
	return v
}

// fakeEmbeddings is an OpenAI-compatible embeddings server answering with
// the fixed vector of each text; it fails with a 500 while failing is set.
type fakeEmbeddings struct {
	url      string
	failing  atomic.Bool
	requests atomic.Int32
}

func newFakeEmbeddings(t *testing.T, vectors map[string][]float64) *fakeEmbeddings {
	t.Helper()
	f := &fakeEmbeddings{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/embeddings" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if f.failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":{"message":"embeddings are down","type":"server_error"}}`)
			return
		}
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("embeddings request: %v", err)
		}
		data := make([]any, len(req.Input))
		for i, text := range req.Input {
			v, ok := vectors[text]
			if !ok {
				t.Errorf("embeddings asked for a text with no fixed vector: %q", text)
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		json.NewEncoder(w).Encode(map[string]any{
			"object": "list", "data": data, "model": "fake-concepts",
			"usage": map[string]any{"prompt_tokens": 1, "total_tokens": 1},
		})
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// recallFixture is the labelled learner's memories in a fresh database,
// added through a service that embeds them, and two services to recall
// them: one by words alone, one by words and meaning.
type recallFixture struct {
	set        labelledSet
	pool       *pgxpool.Pool
	ctx        context.Context // as the facilitator
	learner    *string
	keyOf      map[string]string // memory id → key
	idOf       map[string]string // key → memory id
	embeddings *fakeEmbeddings
	words      *mentor.Service
	hybrid     *mentor.Service
}

func newRecallFixture(t *testing.T) *recallFixture {
	t.Helper()
	set := loadLabelledSet(t)
	vectors := map[string][]float64{}
	for i, m := range set.Memories {
		vectors[m.Content] = set.vector(t, m.Concepts, i)
	}
	for _, q := range set.Queries {
		vectors[q.Message] = set.vector(t, q.Concepts, -1)
	}
	f := &recallFixture{
		set: set, pool: pgtest.NewPool(t), embeddings: newFakeEmbeddings(t, vectors),
		keyOf: map[string]string{}, idOf: map[string]string{},
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := postgres.NewStore(f.pool, 50)
	// Both services read the same memories: a message recalled without an
	// embedding is ranked by words alone, as in a deployment with no
	// embedding model, whatever vectors the memories carry.
	f.words = mentor.NewService(store, summarizer.NewOffline(), log)
	emb := embedder.NewOpenAI(llm.Config{APIKey: "test-key", BaseURL: f.embeddings.url, Model: "fake-concepts", Timeout: 2 * time.Second})
	f.hybrid = mentor.NewService(store, summarizer.NewOffline(), log).WithEmbedder(emb)

	id := uuid.NewString()
	if _, err := f.pool.Exec(t.Context(), `insert into auth.users (id) values ($1::uuid)`, id); err != nil {
		t.Fatal(err)
	}
	f.ctx = asFacilitator(t.Context(), id)
	learner, err := f.hybrid.AddLearner(f.ctx, set.Learner)
	if err != nil {
		t.Fatal(err)
	}
	f.learner = &learner.ID

	for _, m := range set.Memories {
		saved, err := f.hybrid.AddMemory(f.ctx, mentor.NewMemory{
			LearnerID: f.learner, Type: m.Type, Content: m.Content, Importance: m.Importance, Confidence: 1,
			Metadata: mentor.Metadata{mentor.MetaTopic: m.Topic, mentor.MetaNextTopic: m.NextTopic, mentor.MetaEmotion: m.Emotion},
		})
		if err != nil {
			t.Fatalf("add %s: %v", m.Key, err)
		}
		if saved.Merged {
			t.Fatalf("%s merged into %s: the set must hold distinct facts", m.Key, f.keyOf[saved.Memory.ID])
		}
		f.keyOf[saved.Memory.ID] = m.Key
		f.idOf[m.Key] = saved.Memory.ID
	}
	return f
}

// sharesWord tells whether two texts have an english stem in common, as
// recall's word matching sees them.
func (f *recallFixture) sharesWord(t *testing.T, a, b string) bool {
	t.Helper()
	var shared bool
	err := f.pool.QueryRow(t.Context(), `select tsvector_to_array(to_tsvector('english', $1))
		&& tsvector_to_array(to_tsvector('english', $2))`, a, b).Scan(&shared)
	if err != nil {
		t.Fatal(err)
	}
	return shared
}

// recalled is where a labelled memory came in its group.
type recalled struct {
	rank int    // 1-based; 0 when the group left it out
	top  string // the key of the group's first memory
	// margin is the labelled memory's score less the best other score of
	// the group: how far a hit is from a miss.
	margin float64
}

func (f *recallFixture) recall(t *testing.T, svc *mentor.Service, q labelledQuery, semantic bool) recalled {
	t.Helper()
	r, err := svc.RecallContext(f.ctx, f.learner, q.Message, mentor.MemoryFilter{})
	if err != nil {
		t.Fatalf("recall %q: %v", q.Message, err)
	}
	if r.Retrieval.Semantic != semantic {
		t.Errorf("recall %q: Retrieval.Semantic = %v, want %v", q.Message, r.Retrieval.Semantic, semantic)
	}
	var group []mentor.RecalledMemory
	switch f.set.memory(q.Relevant).Type {
	case mentor.Academic:
		group = r.Academic
	case mentor.Personal:
		group = r.Personal
	case mentor.Preference:
		group = r.Preferences
	}
	var got recalled
	if len(group) > 0 {
		got.top = f.keyOf[group[0].ID]
	}
	var score, other float64
	for i, m := range group {
		if m.ID == f.idOf[q.Relevant] {
			got.rank, score = i+1, m.Score
		} else {
			other = max(other, m.Score)
		}
	}
	if got.rank > 0 {
		got.margin = score - other
	}
	return got
}

func (set labelledSet) memory(key string) labelledMemory {
	for _, m := range set.Memories {
		if m.Key == key {
			return m
		}
	}
	return labelledMemory{}
}

// hitRate counts the messages whose memory came within the first k of its
// group.
type hitRate struct{ at1, at3, of int }

func (h *hitRate) add(r recalled) {
	h.of++
	if r.rank == 1 {
		h.at1++
	}
	if r.rank >= 1 && r.rank <= 3 {
		h.at3++
	}
}

func (h hitRate) rate() float64 { return float64(h.at1) / float64(h.of) }

func (h hitRate) String() string {
	return fmt.Sprintf("hit@1 %2d/%-2d = %.2f  hit@3 %2d/%-2d = %.2f",
		h.at1, h.of, float64(h.at1)/float64(h.of), h.at3, h.of, float64(h.at3)/float64(h.of))
}

func mark(r recalled) string {
	switch r.rank {
	case 1:
		return fmt.Sprintf("hit (by %.3f)", r.margin)
	case 0:
		return "out (top " + r.top + ")"
	}
	return fmt.Sprintf("#%d (top %s, %.3f)", r.rank, r.top, r.margin)
}

func TestRecallQuality(t *testing.T) {
	f := newRecallFixture(t)
	for _, q := range f.set.Queries {
		m := f.set.memory(q.Relevant)
		shares := f.sharesWord(t, q.Message, m.Content+" "+m.Topic+" "+m.NextTopic)
		if q.Paraphrase == shares {
			t.Fatalf("%q is labelled paraphrase=%v but shares a word with %s: %v", q.Message, q.Paraphrase, m.Key, shares)
		}
	}

	// by kind: 0 the messages sharing words with their memory, 1 the paraphrases.
	var words, hybrid [2]hitRate
	var lines []string
	for _, q := range f.set.Queries {
		kind := 0
		if q.Paraphrase {
			kind = 1
		}
		byWords := f.recall(t, f.words, q, false)
		byMeaning := f.recall(t, f.hybrid, q, true)
		words[kind].add(byWords)
		hybrid[kind].add(byMeaning)
		lines = append(lines, fmt.Sprintf("  %-10s %-22s words: %-38s words+meaning: %-16s %q",
			[]string{"words", "paraphrase"}[kind], q.Relevant, mark(byWords), mark(byMeaning), q.Message))
		if !q.Paraphrase && byWords.rank != 1 {
			t.Errorf("by words, %q brings up %s first, not %s", q.Message, byWords.top, q.Relevant)
		}
		if !q.Paraphrase && byMeaning.rank != 1 {
			t.Errorf("by words and meaning, %q brings up %s first, not %s", q.Message, byMeaning.top, q.Relevant)
		}
	}
	total := func(h [2]hitRate) hitRate {
		return hitRate{at1: h[0].at1 + h[1].at1, at3: h[0].at3 + h[1].at3, of: h[0].of + h[1].of}
	}
	t.Logf("recall of %d labelled messages over %d memories (labelled memory first of its group):\n%s",
		len(f.set.Queries), len(f.set.Memories), strings.Join(lines, "\n"))
	t.Logf("words only:        all %v | word-matchable %v | paraphrases %v", total(words), words[0], words[1])
	t.Logf("words and meaning: all %v | word-matchable %v | paraphrases %v", total(hybrid), hybrid[0], hybrid[1])

	if got := total(hybrid).rate(); got < minHybridHitAt1 {
		t.Errorf("words and meaning hit@1 = %.2f, want at least %.2f", got, minHybridHitAt1)
	}
	if hybrid[1].at1 <= words[1].at1 {
		t.Errorf("on paraphrases, words and meaning hit %d, no more than words alone (%d)", hybrid[1].at1, words[1].at1)
	}
}

// An embedding model that fails costs meaning, not the answer: recall goes
// on by words, exactly as without a model.
func TestRecallFallsBackToWordsWhenEmbeddingFails(t *testing.T) {
	f := newRecallFixture(t)
	f.embeddings.failing.Store(true)
	before := f.embeddings.requests.Load()
	for _, q := range f.set.Queries {
		if q.Paraphrase {
			continue
		}
		got := f.recall(t, f.hybrid, q, false)
		if got.rank != 1 {
			t.Errorf("with the embedding model down, %q brings up %s first, not %s", q.Message, got.top, q.Relevant)
		}
		if want := f.recall(t, f.words, q, false); got != want {
			t.Errorf("with the embedding model down, %q ranks %+v; by words alone %+v", q.Message, got, want)
		}
	}
	if f.embeddings.requests.Load() == before {
		t.Fatal("the embedding model was never asked: the fallback went untested")
	}
}
