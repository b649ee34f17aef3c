package extractor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"mentormemory/mentor"
)

// ExchangeKey identifies an exchange by its turns alone: the hex SHA-256 of
// each turn's role and trimmed content ("role\ncontent"), joined by blank
// lines. Turn ids, times, the learner and the known memories are left out,
// so a replay matches however the exchange is stored or who it is about.
func ExchangeKey(turns []mentor.Turn) string {
	parts := make([]string, len(turns))
	for i, t := range turns {
		parts[i] = t.Role + "\n" + strings.TrimSpace(t.Content)
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n\n")))
	return hex.EncodeToString(sum[:])
}

// fixtureFile is the JSON of a fixture. The turns are kept so a person can
// read what each recording was made from; the key is what replay matches.
type fixtureFile struct {
	Description string            `json:"description"`
	Exchanges   []fixtureExchange `json:"exchanges"`
}

type fixtureExchange struct {
	Key      string          `json:"key"`
	Turns    []fixtureTurn   `json:"turns"`
	Memories []fixtureMemory `json:"memories"`
}

type fixtureTurn struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type fixtureMemory struct {
	Type       mentor.MemoryType `json:"type"`
	Content    string            `json:"content"`
	Importance float64           `json:"importance"`
	Confidence float64           `json:"confidence"`
	Metadata   mentor.Metadata   `json:"metadata"`
}

// Fixture replays recorded extractions. It is safe for concurrent use.
type Fixture struct {
	byKey map[string][]mentor.NewMemory
}

var _ mentor.Extractor = (*Fixture)(nil)

// LoadFixture reads a fixture written by Recorder.WriteFixture or by hand.
// An exchange may give its key, its turns or both; when both, they must
// agree, so a turn edited by hand cannot silently stop matching. Every
// memory must pass mentor.ValidateNewMemory: a fixture is ours, and a bad
// one should fail loudly rather than be half replayed.
func LoadFixture(path string) (*Fixture, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load fixture: %w", err)
	}
	return ParseFixture(raw, path)
}

// ParseFixture reads a fixture from its JSON; path names it in errors.
func ParseFixture(raw []byte, path string) (*Fixture, error) {
	var file fixtureFile
	if err := json.Unmarshal(raw, &file); err != nil {
		return nil, fmt.Errorf("load fixture %s: %w", path, err)
	}
	f := &Fixture{byKey: make(map[string][]mentor.NewMemory, len(file.Exchanges))}
	for i, ex := range file.Exchanges {
		key, err := ex.checkedKey()
		if err != nil {
			return nil, fmt.Errorf("load fixture %s: exchange %d: %w", path, i+1, err)
		}
		if _, dup := f.byKey[key]; dup {
			return nil, fmt.Errorf("load fixture %s: exchange %d: key %s appears twice", path, i+1, key)
		}
		ms := make([]mentor.NewMemory, len(ex.Memories))
		for j, m := range ex.Memories {
			clean, err := mentor.ValidateNewMemory(mentor.NewMemory{
				Type: m.Type, Content: m.Content, Importance: m.Importance, Confidence: m.Confidence, Metadata: m.Metadata,
			})
			if err != nil {
				return nil, fmt.Errorf("load fixture %s: exchange %d, memory %d: %w", path, i+1, j+1, err)
			}
			ms[j] = clean
		}
		f.byKey[key] = ms
	}
	return f, nil
}

func (ex fixtureExchange) checkedKey() (string, error) {
	if len(ex.Turns) == 0 {
		if ex.Key == "" {
			return "", errors.New("neither key nor turns")
		}
		return ex.Key, nil
	}
	turns := make([]mentor.Turn, len(ex.Turns))
	for i, t := range ex.Turns {
		turns[i] = mentor.Turn{Role: t.Role, Content: t.Content}
	}
	key := ExchangeKey(turns)
	if ex.Key != "" && ex.Key != key {
		return "", fmt.Errorf("key %s does not match its turns (%s)", ex.Key, key)
	}
	return key, nil
}

// Name implements mentor.Extractor.
func (*Fixture) Name() string { return "fixture" }

// Extract implements mentor.Extractor: the recorded memories of the
// exchange, or none for an exchange that was never recorded. Each call gets
// its own copies, so a caller filling them in cannot change the fixture.
func (f *Fixture) Extract(_ context.Context, req mentor.ExtractionRequest) ([]mentor.NewMemory, error) {
	return cloneMemories(f.byKey[ExchangeKey(req.Turns)]), nil
}

func cloneMemories(ms []mentor.NewMemory) []mentor.NewMemory {
	if len(ms) == 0 {
		return nil
	}
	out := make([]mentor.NewMemory, len(ms))
	for i, m := range ms {
		m.Metadata = maps.Clone(m.Metadata)
		out[i] = m
	}
	return out
}

// Recorder passes extractions through to another extractor and records
// them, so a session with a real model can write a fixture that later runs
// replay without one. It is safe for concurrent use.
type Recorder struct {
	inner mentor.Extractor

	mu        sync.Mutex
	exchanges []fixtureExchange
	index     map[string]int // key → position in exchanges
}

var _ mentor.Extractor = (*Recorder)(nil)

// NewRecorder records what inner extracts.
func NewRecorder(inner mentor.Extractor) *Recorder {
	return &Recorder{inner: inner, index: map[string]int{}}
}

// Name implements mentor.Extractor with the inner extractor's name: the
// recorder is transparent to whoever reports which extractor ran.
func (r *Recorder) Name() string { return r.inner.Name() }

// Extract implements mentor.Extractor. A successful extraction is recorded,
// an empty one too (the fixture then shows the exchange was seen); a failed
// one is returned as is and not recorded. A repeated exchange replaces its
// earlier recording.
func (r *Recorder) Extract(ctx context.Context, req mentor.ExtractionRequest) ([]mentor.NewMemory, error) {
	ms, err := r.inner.Extract(ctx, req)
	if err != nil {
		return ms, err
	}
	ex := fixtureExchange{Key: ExchangeKey(req.Turns), Turns: make([]fixtureTurn, len(req.Turns)), Memories: make([]fixtureMemory, len(ms))}
	for i, t := range req.Turns {
		ex.Turns[i] = fixtureTurn{Role: t.Role, Content: strings.TrimSpace(t.Content)}
	}
	for i, m := range ms {
		ex.Memories[i] = fixtureMemory{Type: m.Type, Content: m.Content, Importance: m.Importance, Confidence: m.Confidence, Metadata: maps.Clone(m.Metadata)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.index[ex.Key]; ok {
		r.exchanges[i] = ex
	} else {
		r.index[ex.Key] = len(r.exchanges)
		r.exchanges = append(r.exchanges, ex)
	}
	return ms, nil
}

// WriteFixture writes everything recorded so far as a fixture for
// LoadFixture, in the order first seen. The file is replaced atomically, so
// a reader never sees half of it.
func (r *Recorder) WriteFixture(path string) error {
	r.mu.Lock()
	file := fixtureFile{
		Description: fmt.Sprintf("Memories the %q extractor found in each exchange, recorded by extractor.Recorder and replayed by extractor.Fixture.", r.inner.Name()),
		Exchanges:   append([]fixtureExchange{}, r.exchanges...),
	}
	r.mu.Unlock()
	raw, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return fmt.Errorf("write fixture: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write fixture: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	// CreateTemp makes the file private; a fixture is meant to be shared.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write fixture: %w", err)
	}
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write fixture: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write fixture: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write fixture: %w", err)
	}
	return nil
}
