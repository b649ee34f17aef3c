package extractor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mentormemory/llm"
	"mentormemory/llm/llmtest"
	"mentormemory/mentor"
)

func TestExchangeKey(t *testing.T) {
	turns := []mentor.Turn{
		{ID: "t1", Role: mentor.RoleUser, Content: "  Alex has a dog named Max.\n"},
		{ID: "t2", Role: mentor.RoleAssistant, Content: "\tHow lovely!  "},
	}
	sum := sha256.Sum256([]byte("user\nAlex has a dog named Max.\n\nassistant\nHow lovely!"))
	if got, want := ExchangeKey(turns), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("ExchangeKey = %s, want %s (sha256 of role+\"\\n\"+trimmed content joined by blank lines)", got, want)
	}
	same := []mentor.Turn{{Role: mentor.RoleUser, Content: "Alex has a dog named Max."}, {ID: "other", Role: mentor.RoleAssistant, Content: "How lovely!"}}
	if ExchangeKey(same) != ExchangeKey(turns) {
		t.Errorf("turn ids or surrounding space change the key")
	}
	for name, other := range map[string][]mentor.Turn{
		"role":    {{Role: mentor.RoleAssistant, Content: "Alex has a dog named Max."}, {Role: mentor.RoleAssistant, Content: "How lovely!"}},
		"content": {{Role: mentor.RoleUser, Content: "Alex has a cat named Max."}, {Role: mentor.RoleAssistant, Content: "How lovely!"}},
		"order":   {{Role: mentor.RoleAssistant, Content: "How lovely!"}, {Role: mentor.RoleUser, Content: "Alex has a dog named Max."}},
		"a turn":  {{Role: mentor.RoleUser, Content: "Alex has a dog named Max."}},
	} {
		if ExchangeKey(other) == ExchangeKey(turns) {
			t.Errorf("a different %s gives the same key", name)
		}
	}
}

// A session with a (here fake) model records a fixture; a later run replays
// it without one and gets the same memories for the same exchange.
func TestRecorderFixtureRoundTrip(t *testing.T) {
	f := llmtest.NewChat(t, llmtest.ReplyContent(sampleReply(t), "stop"))
	rec := NewRecorder(newTestOpenAI(f, llm.Config{}))
	if rec.Name() != "openai" {
		t.Errorf("Recorder.Name() = %q, want the inner extractor's", rec.Name())
	}
	recorded, err := extract(t, rec, mentor.ExtractionRequest{LearnerName: "Alex", Turns: exchange})
	if err != nil {
		t.Fatalf("recording Extract: %v", err)
	}
	if len(recorded) != 2 {
		t.Fatalf("recorder passed on %d memories, want the inner extractor's 2", len(recorded))
	}
	path := filepath.Join(t.TempDir(), "extractions.json")
	if err := rec.WriteFixture(path); err != nil {
		t.Fatalf("WriteFixture: %v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"description"`, `"exchanges"`, `"key": "` + ExchangeKey(exchange) + `"`, exchange[0].Content, `"role": "assistant"`, "Alex has a dog named Max."} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("fixture file lacks %q:\n%s", want, raw)
		}
	}

	fx, err := LoadFixture(path)
	if err != nil {
		t.Fatalf("LoadFixture: %v", err)
	}
	if fx.Name() != "fixture" {
		t.Errorf("Fixture.Name() = %q, want fixture", fx.Name())
	}
	// The same exchange as stored later: other ids, other spacing, another
	// learner and known memories do not matter.
	again := []mentor.Turn{
		{ID: "42", Role: mentor.RoleUser, Content: "  " + exchange[0].Content + "\n"},
		{ID: "43", Role: mentor.RoleAssistant, Content: exchange[1].Content},
	}
	replayed, err := extract(t, fx, mentor.ExtractionRequest{Turns: again, Known: []mentor.LearnerMemory{{Type: mentor.Personal, Content: "x"}}})
	if err != nil {
		t.Fatalf("replay Extract: %v", err)
	}
	if !reflect.DeepEqual(replayed, recorded) {
		t.Errorf("replayed\n%#v\nwant the recorded\n%#v", replayed, recorded)
	}

	unknown, err := extract(t, fx, mentor.ExtractionRequest{Turns: []mentor.Turn{{Role: mentor.RoleUser, Content: "Something never recorded."}}})
	if err != nil || unknown != nil {
		t.Errorf("unknown exchange = %v, %v; want no memories and no error", unknown, err)
	}
	if n := len(f.Calls()); n != 1 {
		t.Errorf("the model was asked %d times, want once: replay must not call it", n)
	}
}

// An empty extraction is recorded (the fixture shows the exchange was
// seen); a repeated exchange replaces its recording; a failure is not
// recorded and is passed on.
func TestRecorderRecordsEmptyReplacesRepeatsSkipsFailures(t *testing.T) {
	inner := &scripted{}
	rec := NewRecorder(inner)
	first := []mentor.Turn{{Role: mentor.RoleUser, Content: "Hello!"}}
	second := []mentor.Turn{{Role: mentor.RoleUser, Content: "Alex starts at a new school on Monday."}}
	failing := []mentor.Turn{{Role: mentor.RoleUser, Content: "This one fails."}}

	inner.next = []mentor.NewMemory{{Type: mentor.Personal, Content: "Outdated.", Importance: 0.5, Confidence: 0.9, Metadata: mentor.Metadata{}}}
	mustExtract(t, rec, second)
	inner.next = nil
	mustExtract(t, rec, first)
	want := []mentor.NewMemory{{Type: mentor.Context, Content: "Alex starts at a new school on Monday.", Importance: 0.7, Confidence: 0.9, Metadata: mentor.Metadata{"topic": "school"}}}
	inner.next = want
	mustExtract(t, rec, second)
	inner.err = errors.New("model down")
	if _, err := rec.Extract(context.Background(), mentor.ExtractionRequest{Turns: failing}); !errors.Is(err, inner.err) {
		t.Errorf("recorder error = %v, want the inner error", err)
	}

	path := filepath.Join(t.TempDir(), "fixture.json")
	if err := rec.WriteFixture(path); err != nil {
		t.Fatalf("WriteFixture: %v", err)
	}
	raw, _ := os.ReadFile(path)
	if got := strings.Count(string(raw), `"key"`); got != 2 {
		t.Errorf("fixture has %d exchanges, want 2 (empty one kept, repeat replaced, failure skipped):\n%s", got, raw)
	}
	if strings.Contains(string(raw), "This one fails") || strings.Contains(string(raw), "Outdated") {
		t.Errorf("fixture holds a failed or replaced recording:\n%s", raw)
	}
	if i, j := strings.Index(string(raw), "Alex starts"), strings.Index(string(raw), "Hello!"); i > j {
		t.Errorf("a replaced recording moved: exchanges should stay in the order first seen:\n%s", raw)
	}
	fx, err := LoadFixture(path)
	if err != nil {
		t.Fatalf("LoadFixture: %v", err)
	}
	if got := mustExtract(t, fx, second); !reflect.DeepEqual(got, want) {
		t.Errorf("replayed %#v, want the latest recording %#v", got, want)
	}
	if got := mustExtract(t, fx, first); got != nil {
		t.Errorf("empty recording replayed as %#v, want nothing", got)
	}
}

// scripted is an extractor that returns what it is told to.
type scripted struct {
	next []mentor.NewMemory
	err  error
}

func (*scripted) Name() string { return "scripted" }

func (s *scripted) Extract(context.Context, mentor.ExtractionRequest) ([]mentor.NewMemory, error) {
	return s.next, s.err
}

func mustExtract(t *testing.T, e mentor.Extractor, turns []mentor.Turn) []mentor.NewMemory {
	t.Helper()
	ms, err := e.Extract(context.Background(), mentor.ExtractionRequest{Turns: turns})
	if err != nil {
		t.Fatalf("%s Extract: %v", e.Name(), err)
	}
	return ms
}

// A caller fills in what it gets; that must not change later replays.
func TestFixtureReturnsCopies(t *testing.T) {
	turns := []mentor.Turn{{Role: mentor.RoleUser, Content: "Alex loves dinosaurs."}}
	path := writeFile(t, `{"description": "hand-written", "exchanges": [{"turns": [{"role": "user", "content": "Alex loves dinosaurs."}],
		"memories": [{"type": "personal", "content": "Alex loves dinosaurs.", "importance": 0.5, "confidence": 1, "metadata": {"topic": "interests"}}]}]}`)
	fx, err := LoadFixture(path)
	if err != nil {
		t.Fatalf("LoadFixture: %v", err)
	}
	got := mustExtract(t, fx, turns)
	got[0].Metadata["topic"] = "changed"
	got[0].Content = "changed"
	again := mustExtract(t, fx, turns)
	if again[0].Content != "Alex loves dinosaurs." || again[0].Metadata["topic"] != "interests" {
		t.Errorf("a caller's change reached the fixture: %#v", again[0])
	}
}

// A hand-written exchange may give only its key.
func TestLoadFixtureByKeyOnly(t *testing.T) {
	turns := []mentor.Turn{{Role: mentor.RoleUser, Content: "Alex is scared of dogs."}}
	path := writeFile(t, `{"exchanges": [{"key": "`+ExchangeKey(turns)+`",
		"memories": [{"type": "preference", "content": "Alex is scared of dogs.", "importance": 0.6, "confidence": 0.9, "metadata": {"emotion": "Anxious"}}]}]}`)
	fx, err := LoadFixture(path)
	if err != nil {
		t.Fatalf("LoadFixture: %v", err)
	}
	got := mustExtract(t, fx, turns)
	if len(got) != 1 || got[0].Metadata.Emotion() != "anxious" {
		t.Errorf("replayed %#v, want the one memory, validated (emotion lower-cased)", got)
	}
}

func TestLoadFixtureRejects(t *testing.T) {
	turn := `{"role": "user", "content": "Alex has a dog."}`
	mem := `{"type": "personal", "content": "Alex has a dog.", "importance": 0.5, "confidence": 1, "metadata": {}}`
	cases := map[string]string{
		"not JSON":               `{"exchanges": [`,
		"key and turns disagree": `{"exchanges": [{"key": "` + strings.Repeat("0", 64) + `", "turns": [` + turn + `], "memories": []}]}`,
		"neither key nor turns":  `{"exchanges": [{"memories": [` + mem + `]}]}`,
		"duplicate exchange":     `{"exchanges": [{"turns": [` + turn + `], "memories": []}, {"turns": [` + turn + `], "memories": [` + mem + `]}]}`,
		"invalid memory":         `{"exchanges": [{"turns": [` + turn + `], "memories": [{"type": "personal", "content": "Alex has a dog.", "importance": 2, "confidence": 1}]}]}`,
		"unknown type":           `{"exchanges": [{"turns": [` + turn + `], "memories": [{"type": "hobby", "content": "Alex has a dog.", "importance": 0.5, "confidence": 1}]}]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			if fx, err := LoadFixture(writeFile(t, body)); err == nil {
				t.Errorf("LoadFixture accepted it: %#v", fx)
			}
		})
	}
	if _, err := LoadFixture(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v, want os.ErrNotExist", err)
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
