package postgres_test

// The recall quality test: one learner's hand-labelled memories
// (testdata/recall_labelled.json) are added through the service, and each
// labelled message is recalled by words alone and by words and meaning, in
// three states of the conversation (see scenarios). A message names the
// memory it should bring up first ("relevant") and the other memories that
// are about what it asks ("also"); every other memory it brings is
// irrelevant, except, on a session's first message, those that message
// brings whatever it says (see mentor.RecallSessionStart), which are
// counted apart. Rank is hit@1, hit@3 and mean reciprocal rank of the
// relevant memory; precision the share of the memories the messages earned
// that were relevant or "also". The set holds distractors: memories that share a word with a
// message (times tables and a timed test, basketball practice and practice
// lining up digits) or a feeling (a fact about long division learnt while
// frustrated) without being what was asked.
//
//	DATABASE_URL='postgres://postgres@127.0.0.1:54330/postgres?sslmode=disable' \
//	    go test -count=1 -run RecallQuality -v ./postgres/
//
// Two kinds of message are measured:
//   - queries show no feeling: the relevant memory should come first in its
//     type's group;
//   - emotional messages show one: the relevant memory is how the learner
//     responds to that feeling, and should come first in the emotional
//     patterns.
//
// The embedding model is a fake OpenAI-compatible server with fixed
// vectors: every text is given, by hand, the concepts it is about (one
// axis each), which is what a real model captures; the labels play no part
// in the vectors. Its cosines are those of a real model of the kind the
// service is meant for (OpenAI's text-embedding-3): every text also has an
// axis of its own for the details no other text shares, so a message about
// exactly a memory's concepts is at cosine ≈ 0.5 from it, not 1; and every
// vector leans the same way on one more axis, so two texts about nothing
// in common are at backgroundCosine, not 0. A relevance floor measured
// against cosines of 1 and 0 would not hold with a real model.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
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
)

// minHybridHitAt1 is the share of labelled messages whose memory recall by
// words and meaning must rank first of its group.
const minHybridHitAt1 = 0.9

// The share of the memories the labelled messages earn that must be about
// what the message asks, by words and meaning and by words alone. When
// every group was filled whatever the message, 1 in 10 to 1 in 7 was.
const (
	minHybridPrecision = 0.70
	minWordsPrecision  = 0.40
)

// minEmotionalPrecision is the share of the emotional patterns recalled
// for a feeling that must be how the learner responds to it: a fact learnt
// with the same feeling (a struggle with long division, a lost game) is not.
const minEmotionalPrecision = 0.9

// detailWeight is a text's component on its own axis, against 1 for a
// single concept. Two texts about exactly the same concept are then at
// cosine 0.15 + 0.85/(1+1.2²) ≈ 0.50, as a question and the passage that
// answers it are with text-embedding-3 models (about 0.45); and no two
// memories are near the 0.90 at which adding the second would merge it
// into the first.
const detailWeight = 1.2

// backgroundCosine is the cosine of two texts with no concept in common:
// with text-embedding-3 models, unrelated texts are at about 0.1 to 0.2.
const backgroundCosine = 0.15

type labelledSet struct {
	Learner   string           `json:"learner"`
	Concepts  []string         `json:"concepts"`
	Memories  []labelledMemory `json:"memories"`
	Queries   []labelledQuery  `json:"queries"`
	Emotional []labelledQuery  `json:"emotional"`
}

type labelledMemory struct {
	Key        string            `json:"key"`
	Type       mentor.MemoryType `json:"type"`
	Content    string            `json:"content"`
	Importance float64           `json:"importance"`
	Topic      string            `json:"topic"`
	NextTopic  string            `json:"next_topic"`
	Emotion    string            `json:"emotion"`
	Category   string            `json:"category"`
	Trigger    string            `json:"trigger"`
	Response   string            `json:"response"`
	// Mentions is how often the fact is learnt; a repeat is merged into the
	// memory and confirms it.
	Mentions int                `json:"mentions"`
	Concepts map[string]float64 `json:"concepts"`
}

type labelledQuery struct {
	Message string `json:"message"`
	// Relevant is the key of the memory the message should bring up first.
	Relevant string `json:"relevant"`
	// Also are the other memories about what the message asks: welcome
	// beside the relevant one, and not counted against precision.
	Also []string `json:"also"`
	// Paraphrase says the message shares no word with the relevant
	// memory (nor with its topic): only meaning can find it.
	Paraphrase bool               `json:"paraphrase"`
	Concepts   map[string]float64 `json:"concepts"`
}

func loadLabelledSet(t testing.TB) labelledSet {
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
	for _, q := range append(slices.Clone(set.Queries), set.Emotional...) {
		for _, key := range append([]string{q.Relevant}, q.Also...) {
			if _, ok := memories[key]; !ok {
				t.Fatalf("%q is labelled with %q, which is no memory of the set", q.Message, key)
			}
		}
	}
	for _, q := range set.Queries {
		if memories[q.Relevant].Type == mentor.Context {
			t.Fatalf("%q is labelled with %q, which is no academic, personal or preference memory", q.Message, q.Relevant)
		}
		// A feeling in the message would add emotional patterns and
		// measure something else.
		if emotions := mentor.EmotionsIn(q.Message); len(emotions) > 0 {
			t.Fatalf("%q shows a feeling (%v); the queries measure ranking alone", q.Message, emotions)
		}
	}
	for _, q := range set.Emotional {
		if len(mentor.EmotionsIn(q.Message)) == 0 {
			t.Fatalf("%q shows no feeling the mentor knows", q.Message)
		}
		if memories[q.Relevant].Type != mentor.Preference {
			t.Fatalf("%q is labelled with %q, which is no preference: no way the learner responds to a feeling", q.Message, q.Relevant)
		}
	}
	return set
}

// vector is a text's point in concept space: its concepts, then its own
// detail axis (one for each labelled text, numbered by detail), scaled to
// leave room for the background axis every text shares.
func (set labelledSet) vector(t testing.TB, concepts map[string]float64, detail int) []float64 {
	t.Helper()
	if len(concepts) == 0 {
		t.Fatal("a text with no concept has no meaning to give it")
	}
	texts := len(set.Memories) + len(set.Queries) + len(set.Emotional)
	v := make([]float64, len(set.Concepts)+texts+1)
	for name, weight := range concepts {
		axis := slices.Index(set.Concepts, name)
		if axis < 0 {
			t.Fatalf("concept %q is not in the concept list", name)
		}
		v[axis] = weight
	}
	v[len(set.Concepts)+detail] = detailWeight
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	scale := math.Sqrt((1 - backgroundCosine) / norm)
	for i := range v {
		v[i] *= scale
	}
	v[len(v)-1] = math.Sqrt(backgroundCosine)
	return v
}

// fakeEmbeddings is an OpenAI-compatible embeddings server answering with
// the fixed vector of each text; it fails with a 500 while failing is set.
type fakeEmbeddings struct {
	url      string
	failing  atomic.Bool
	requests atomic.Int32
}

func newFakeEmbeddings(t testing.TB, vectors map[string][]float64) *fakeEmbeddings {
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
	// live says a session is under way, so the next message does not
	// open one.
	live bool
	// givenAtStart are the memories (by id) a session's first message
	// brings whatever it says, while the scenario is a session's start.
	givenAtStart map[string]bool
}

func newRecallFixture(t testing.TB) *recallFixture {
	t.Helper()
	set := loadLabelledSet(t)
	vectors := map[string][]float64{}
	for i, m := range set.Memories {
		vectors[m.Content] = set.vector(t, m.Concepts, i)
	}
	for i, q := range append(slices.Clone(set.Queries), set.Emotional...) {
		vectors[q.Message] = set.vector(t, q.Concepts, len(set.Memories)+i)
	}
	f := &recallFixture{
		set: set, pool: pgtest.NewPool(t), embeddings: newFakeEmbeddings(t, vectors),
		keyOf: map[string]string{}, idOf: map[string]string{},
	}
	store := postgres.NewStore(f.pool, 50)
	// Both services read the same memories: a message recalled without an
	// embedding is ranked by words alone, as in a deployment with no
	// embedding model, whatever vectors the memories carry.
	f.words = offlineService(store)
	emb := embedder.NewOpenAI(llm.Config{APIKey: "test-key", BaseURL: f.embeddings.url, Model: "fake-concepts", Timeout: 2 * time.Second})
	f.hybrid = offlineService(store).WithEmbedder(emb)

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
		for learnt := range max(m.Mentions, 1) {
			saved, err := f.hybrid.AddMemory(f.ctx, mentor.NewMemory{
				LearnerID: f.learner, Type: m.Type, Content: m.Content, Importance: m.Importance, Confidence: 1,
				Metadata: mentor.Metadata{mentor.MetaTopic: m.Topic, mentor.MetaNextTopic: m.NextTopic, mentor.MetaEmotion: m.Emotion,
					mentor.MetaCategory: m.Category, mentor.MetaTrigger: m.Trigger, mentor.MetaResponse: m.Response},
			})
			if err != nil {
				t.Fatalf("add %s: %v", m.Key, err)
			}
			if repeat := learnt > 0; saved.Merged != repeat {
				t.Fatalf("adding %s for the %d. time: merged %v into %s", m.Key, learnt+1, saved.Merged, f.keyOf[saved.Memory.ID])
			}
			f.keyOf[saved.Memory.ID] = m.Key
			f.idOf[m.Key] = saved.Memory.ID
		}
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

// A scenario is the state of the conversation a message is recalled in.
type scenario struct {
	name string
	// previous returns the exchange a live session had just before the
	// message; nil when the message opens a session.
	previous func(message string) string
	// mode is the retrieval a query (no feeling shown) must run in it.
	mode string
}

// offTopic shares no word with any labelled message.
const offTopic = "Sorry we are late, the traffic on the ring road was awful."

var scenarios = []scenario{
	// The first message of a session: deep retrieval.
	{name: "session start", mode: mentor.RetrievalDeep},
	// A follow-up on the topic of the exchange before: light retrieval.
	{name: "live, same topic", previous: func(message string) string { return message }, mode: mentor.RetrievalLight},
	// A change of topic in a live session: deep retrieval.
	{name: "live, new topic", previous: func(string) string { return offTopic }, mode: mentor.RetrievalDeep},
}

// given returns the memories a session's first message brings whatever it
// says: those a message with no words brings.
func (f *recallFixture) given(t *testing.T) mentor.Recall {
	t.Helper()
	f.enter(t, scenarios[0], "")
	r, err := f.words.RecallContext(f.ctx, f.learner, "", mentor.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// enter puts the conversation in scenario s for message: the live session
// ended, then, unless the message opens a session, one exchange posted.
func (f *recallFixture) enter(t testing.TB, s scenario, message string) {
	t.Helper()
	if f.live {
		if _, err := f.words.EndSession(f.ctx, f.learner); err != nil {
			t.Fatal(err)
		}
		f.live = false
	}
	if s.previous == nil {
		return
	}
	exchange := []mentor.Turn{
		{ID: uuid.NewString(), Role: mentor.RoleUser, Content: s.previous(message)},
		{ID: uuid.NewString(), Role: mentor.RoleAssistant, Content: "Okay."},
	}
	if _, err := f.words.Update(f.ctx, f.learner, exchange, false); err != nil {
		t.Fatal(err)
	}
	f.live = true
}

// recalled is what recall brought for a labelled message.
type recalled struct {
	rank int    // of the relevant memory in its group, 1-based; 0 when left out
	top  string // the key of the group's first memory
	// margin is the relevant memory's score less the best other score of
	// the group: how far a hit is from a miss.
	margin float64
	// returned counts the memories recalled (in the groups, or for an
	// emotional message in the emotional patterns), wanted those of them
	// the message is about, and given the others that a session's first
	// message brings whatever it says.
	returned, wanted, given int
	// unwanted names the memories recalled that the message is not about.
	unwanted string
	mode     string
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
	got := recalled{mode: r.Retrieval.Mode}
	// What the message brings, and where the relevant memory should be.
	brought := slices.Concat(r.Academic, r.Personal, r.Preferences, r.Context)
	var group []mentor.RecalledMemory
	switch f.set.memory(q.Relevant).Type {
	case mentor.Academic:
		group = r.Academic
	case mentor.Personal:
		group = r.Personal
	case mentor.Preference:
		group = r.Preferences
	}
	if len(mentor.EmotionsIn(q.Message)) > 0 {
		brought, group = r.EmotionalPatterns, r.EmotionalPatterns
	}
	wanted := append([]string{q.Relevant}, q.Also...)
	var unwanted []string
	for _, m := range brought {
		got.returned++
		switch {
		case slices.Contains(wanted, f.keyOf[m.ID]):
			got.wanted++
		case f.givenAtStart[m.ID]:
			got.given++
		default:
			unwanted = append(unwanted, f.keyOf[m.ID])
		}
	}
	got.unwanted = strings.Join(unwanted, " ")
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

// quality sums up the recalls of several messages: where the relevant
// memory came (hit@1, hit@3, mean reciprocal rank) and how much of what
// the messages earned was wanted (precision).
type quality struct {
	of, at1, at3            int
	reciprocal              float64
	returned, wanted, given int
}

func (h *quality) add(r recalled) {
	h.of++
	if r.rank == 1 {
		h.at1++
	}
	if r.rank >= 1 && r.rank <= 3 {
		h.at3++
	}
	if r.rank > 0 {
		h.reciprocal += 1 / float64(r.rank)
	}
	h.returned += r.returned
	h.wanted += r.wanted
	h.given += r.given
}

func (h quality) plus(o quality) quality {
	return quality{of: h.of + o.of, at1: h.at1 + o.at1, at3: h.at3 + o.at3, reciprocal: h.reciprocal + o.reciprocal,
		returned: h.returned + o.returned, wanted: h.wanted + o.wanted, given: h.given + o.given}
}

func (h quality) hitAt1() float64 { return float64(h.at1) / float64(h.of) }

// precision is the share of the memories the messages earned that were
// wanted; 1 when they earned none, as nothing irrelevant came.
func (h quality) precision() float64 {
	if h.returned == h.given {
		return 1
	}
	return float64(h.wanted) / float64(h.returned-h.given)
}

// perMessage is n on average over the messages.
func (h quality) perMessage(n int) float64 { return float64(n) / float64(h.of) }

func (h quality) String() string {
	return fmt.Sprintf("hit@1 %2d/%-2d  hit@3 %2d/%-2d  MRR %.2f  precision %.2f  irrelevant/msg %4.1f  recalled/msg %4.1f (%.1f given at start)",
		h.at1, h.of, h.at3, h.of, h.reciprocal/float64(h.of), h.precision(), h.perMessage(h.returned-h.given-h.wanted),
		h.perMessage(h.returned), h.perMessage(h.given))
}

// mark tells where the relevant memory came, and how many of the memories
// the message earned were wanted.
func mark(r recalled) string {
	earned := r.returned - r.given
	switch r.rank {
	case 1:
		return fmt.Sprintf("hit (by %.3f) %d/%d", r.margin, r.wanted, earned)
	case 0:
		return fmt.Sprintf("out (top %s) %d/%d", r.top, r.wanted, earned)
	}
	return fmt.Sprintf("#%d (top %s, %.3f) %d/%d", r.rank, r.top, r.margin, r.wanted, earned)
}

// measured is the quality of one scenario, by words alone and by words and
// meaning; queries by kind: 0 those sharing words with their memory, 1 the
// paraphrases.
type measured struct {
	words, hybrid                   [2]quality
	emotionalWords, emotionalHybrid quality
}

// measure recalls every labelled message in scenario s and logs each one.
func (f *recallFixture) measure(t *testing.T, s scenario) measured {
	t.Helper()
	f.givenAtStart = map[string]bool{}
	if s.previous == nil {
		given := f.given(t)
		for _, m := range slices.Concat(given.Academic, given.Personal, given.Preferences, given.Context) {
			f.givenAtStart[m.ID] = true
		}
	}
	var m measured
	var lines []string
	for _, q := range f.set.Queries {
		kind := 0
		if q.Paraphrase {
			kind = 1
		}
		f.enter(t, s, q.Message)
		byWords := f.recall(t, f.words, q, false)
		byMeaning := f.recall(t, f.hybrid, q, true)
		for _, r := range []recalled{byWords, byMeaning} {
			if r.mode != s.mode {
				t.Errorf("%s: %q ran %s retrieval, want %s", s.name, q.Message, r.mode, s.mode)
			}
		}
		m.words[kind].add(byWords)
		m.hybrid[kind].add(byMeaning)
		lines = append(lines, fmt.Sprintf("  %-10s %-22s words: %-44s words+meaning: %-34s %q\n%36s unwanted by words: %s; by words and meaning: %s",
			[]string{"words", "paraphrase"}[kind], q.Relevant, mark(byWords), mark(byMeaning), q.Message, "", byWords.unwanted, byMeaning.unwanted))
	}
	for _, q := range f.set.Emotional {
		f.enter(t, s, q.Message)
		byWords := f.recall(t, f.words, q, false)
		byMeaning := f.recall(t, f.hybrid, q, true)
		m.emotionalWords.add(byWords)
		m.emotionalHybrid.add(byMeaning)
		lines = append(lines, fmt.Sprintf("  %-10s %-22s words: %-44s words+meaning: %-34s %q",
			"feeling", q.Relevant, mark(byWords), mark(byMeaning), q.Message))
	}
	t.Logf("%s: %d messages over %d memories (where the relevant memory came; wanted/earned):\n%s",
		s.name, len(f.set.Queries)+len(f.set.Emotional), len(f.set.Memories), strings.Join(lines, "\n"))
	return m
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
	var summary []string
	for _, s := range scenarios {
		m := f.measure(t, s)
		summary = append(summary,
			fmt.Sprintf("%-17s words only          all        %v", s.name, m.words[0].plus(m.words[1])),
			fmt.Sprintf("%-17s words only          word-match %v", "", m.words[0]),
			fmt.Sprintf("%-17s words only          paraphrase %v", "", m.words[1]),
			fmt.Sprintf("%-17s words and meaning   all        %v", "", m.hybrid[0].plus(m.hybrid[1])),
			fmt.Sprintf("%-17s words and meaning   word-match %v", "", m.hybrid[0]),
			fmt.Sprintf("%-17s words and meaning   paraphrase %v", "", m.hybrid[1]),
			fmt.Sprintf("%-17s emotional patterns  words      %v", "", m.emotionalWords),
			fmt.Sprintf("%-17s emotional patterns  meaning    %v", "", m.emotionalHybrid))

		if m.words[0].at1 != m.words[0].of {
			t.Errorf("%s: by words, %d of %d word-matchable messages bring their memory first", s.name, m.words[0].at1, m.words[0].of)
		}
		if m.hybrid[0].at1 != m.hybrid[0].of {
			t.Errorf("%s: by words and meaning, %d of %d word-matchable messages bring their memory first", s.name, m.hybrid[0].at1, m.hybrid[0].of)
		}
		if got := m.hybrid[0].plus(m.hybrid[1]).hitAt1(); got < minHybridHitAt1 {
			t.Errorf("%s: words and meaning hit@1 = %.2f, want at least %.2f", s.name, got, minHybridHitAt1)
		}
		if got := m.hybrid[0].plus(m.hybrid[1]).precision(); got < minHybridPrecision {
			t.Errorf("%s: words and meaning precision = %.2f, want at least %.2f", s.name, got, minHybridPrecision)
		}
		if got := m.words[0].plus(m.words[1]).precision(); got < minWordsPrecision {
			t.Errorf("%s: words only precision = %.2f, want at least %.2f", s.name, got, minWordsPrecision)
		}
		if m.hybrid[1].at1 <= m.words[1].at1 {
			t.Errorf("%s: on paraphrases, words and meaning hit %d, no more than words alone (%d)", s.name, m.hybrid[1].at1, m.words[1].at1)
		}
		for _, e := range []quality{m.emotionalWords, m.emotionalHybrid} {
			if e.at1 != e.of {
				t.Errorf("%s: %d of %d messages showing a feeling bring the learner's response to it first", s.name, e.at1, e.of)
			}
			if e.precision() < minEmotionalPrecision {
				t.Errorf("%s: emotional patterns precision %.2f, want at least %.2f", s.name, e.precision(), minEmotionalPrecision)
			}
		}
	}
	t.Logf("recall quality (hit@k: the relevant memory within the first k of its group; precision: wanted/earned, "+
		"leaving out what a session's first message brings whatever it says):\n%s",
		strings.Join(summary, "\n"))
}

// Only relevance brings a memory, but at a session's start: mid-session
// a message that names nothing any memory holds brings nothing, and "hint"
// brings the memory about hints alone (it used to bring a memory of every
// type, 13 in all), unless a filter by metadata has chosen the memories. A
// session's first message also brings the learner's most important
// memories of each type, and the newest continuity: no more than
// mentor.RecallSessionStart of each.
func TestRecallBringsWhatTheMessageEarns(t *testing.T) {
	f := newRecallFixture(t)
	given := f.given(t)
	for _, group := range [][]mentor.RecalledMemory{given.Academic, given.Personal, given.Preferences, given.Context} {
		if len(group) > mentor.RecallSessionStart {
			t.Errorf("a session's first message, whatever it says, brings %v", f.keys(group))
		}
	}
	if got := f.keys(given.Personal); !sameKeys(got, []string{"basketball", "dog"}) {
		t.Errorf("a session's first message brings %v, want the most important personal memories, basketball and the dog", got)
	}
	if got := f.keys(given.Context); !sameKeys(got, []string{"tired_end", "photo_of_max"}) {
		t.Errorf("a session's first message brings %v, want the newest continuity, tired_end and photo_of_max", got)
	}
	for _, c := range []struct {
		message string
		filter  mentor.MemoryFilter
		want    string
	}{
		{message: "hint", want: "hints"},
		{message: "Okay, thanks!", want: ""},
		{message: "hint", filter: mentor.MemoryFilter{Emotion: "anxious"}, want: "timed_tests grandma_worry"},
	} {
		f.enter(t, scenarios[1], c.message)
		r, err := f.words.RecallContext(f.ctx, f.learner, c.message, c.filter)
		if err != nil {
			t.Fatal(err)
		}
		got := f.keys(slices.Concat(r.Academic, r.Personal, r.Preferences, r.Context, r.EmotionalPatterns))
		if want := strings.Fields(c.want); !sameKeys(got, want) {
			t.Errorf("in a live session, %q (filter %+v) brings %v, want %v", c.message, c.filter, got, want)
		}
	}
}

// keys names memories by their keys in the labelled set.
func (f *recallFixture) keys(ms []mentor.RecalledMemory) []string {
	keys := []string{}
	for _, m := range ms {
		keys = append(keys, f.keyOf[m.ID])
	}
	return keys
}

// sameKeys tells whether two lists hold the same keys, in any order.
func sameKeys(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(k string) bool { return !slices.Contains(b, k) })
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
