package searchquality

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// samplesDir is the product's sample transcripts seen from this package's
// directory, where go test runs.
const samplesDir = "../../simulator/samples"

// loadDataset generates the labelled set the tests measure, the sample
// transcripts included.
func loadDataset(t *testing.T) Dataset {
	t.Helper()
	samples, err := LoadSamples(samplesDir)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(DefaultSeed)
	if env := os.Getenv("SEARCHQUALITY_SEED"); env != "" {
		// Another seed gives another labelled set of the same shape: a way
		// to check that a ranking change is not tuned to one draw.
		n, err := strconv.ParseUint(env, 10, 64)
		if err != nil {
			t.Fatalf("SEARCHQUALITY_SEED: %v", err)
		}
		seed = n
		t.Logf("seed %d", seed)
	}
	return Generate(seed, samples)
}

// TestDataset checks the properties the measurement relies on; it needs no
// database, so it also runs where DATABASE_URL is not set.
func TestDataset(t *testing.T) {
	d := loadDataset(t)
	if again := loadDataset(t); !reflect.DeepEqual(d, again) {
		t.Fatal("Generate is not deterministic")
	}
	if len(d.Questions) < 150 {
		t.Errorf("%d questions, want at least 150", len(d.Questions))
	}

	kinds := map[string]int{}
	turns, sessions := 0, 0
	sessionsOf := map[string]int{}
	for _, f := range d.Facilitators {
		sessionsOf[f.Key] = len(f.Sessions)
		if of, copied := strings.CutSuffix(f.Key, whenSuffix); copied {
			// A copy for the when questions: the account's sessions, and
			// for each event one that tells it and decoysPerEvent more.
			if added := len(f.Sessions) - sessionsOf[of]; added%(1+decoysPerEvent) != 0 || added/(1+decoysPerEvent) < 8 {
				t.Errorf("%s: %d sessions more than %s, want 8 events or more", f.Key, added, of)
			}
		} else if n := len(f.Sessions); n < 30 || n > 60 {
			t.Errorf("%s: %d sessions, want 30–60", f.Key, n)
		}
		long := 0
		for _, s := range f.Sessions {
			sessions++
			turns += len(s.Turns)
			n := len(s.Turns)
			if s.Source == "generated" && !(n >= 6 && n <= 40 || n > 50 && n <= 70) {
				t.Errorf("%s: %d turns", s.ID, n)
			}
			if n > 50 {
				long++
			}
			for i, turn := range s.Turns {
				if strings.ContainsAny(turn.Content, "{}") {
					t.Errorf("%s: unfilled placeholder in %q", turn.ID, turn.Content)
				}
				if want := []string{RoleUser, RoleAssistant}[i%2]; s.Source == "generated" && turn.Role != want {
					t.Errorf("%s: role %s, want %s", turn.ID, turn.Role, want)
				}
			}
		}
		if long == 0 {
			t.Errorf("%s: no session longer than the 50-turn archive segment", f.Key)
		}
		// Every session was over before the day it is loaded, as history is.
		today := time.Now().UTC().Truncate(24 * time.Hour)
		for _, s := range f.Sessions {
			if end := s.TurnTime(today, len(s.Turns)); !end.Before(today) || end.Year() < 2022 {
				t.Errorf("%s: held until %s, want between 2022 and today", s.ID, end)
			}
		}
	}

	seen := map[string]bool{}
	for _, q := range d.Questions {
		kinds[q.Kind]++
		f, s := d.Session(q.SessionID)
		if s == nil || f.Key != q.Facilitator {
			t.Errorf("%s: labelled session %s is not %s's", q.ID, q.SessionID, q.Facilitator)
			continue
		}
		key := q.Facilitator + "|" + strings.ToLower(q.Text)
		if seen[key] {
			t.Errorf("%s: duplicate question %q", q.ID, q.Text)
		}
		seen[key] = true
		// The answer is said once: in the labelled session and no other.
		var holders []string
		for _, other := range f.Sessions {
			for _, turn := range other.Turns {
				if strings.Contains(strings.ToLower(turn.Content), strings.ToLower(q.Evidence)) {
					holders = append(holders, other.ID)
					break
				}
			}
		}
		if len(holders) != 1 || holders[0] != q.SessionID {
			t.Errorf("%s: evidence %q found in %v, want only %s", q.ID, q.Evidence, holders, q.SessionID)
		}
		// Questions must not copy the fact: no run of five words in common.
		if shared := sharedRun(q.Text, q.Evidence, 5); shared != "" {
			t.Errorf("%s: %q copies %q from its evidence", q.ID, q.Text, shared)
		}
		// "When did we talk about X" keeps X's keyword, as people do.
		if (q.Kind == KindTemporal || q.Kind == KindStopwords) && !sharesKeyword(q.Text, q.Evidence, f) {
			t.Errorf("%s: %q has no keyword of its evidence %q", q.ID, q.Text, q.Evidence)
		}
	}
	t.Logf("%d facilitators, %d sessions, %d turns, %d questions; by kind %v",
		len(d.Facilitators), sessions, turns, len(d.Questions), kinds)

	if dir := os.Getenv("SEARCHQUALITY_DUMP"); dir != "" {
		dump(t, dir, d)
	}
}

// TestBM25Baseline reports the reference BM25 on the set, without a
// database: the quick loop for tuning the generator's difficulty.
func TestBM25Baseline(t *testing.T) {
	d := loadDataset(t)
	outs := bm25Outcomes(&d)
	t.Logf("reference BM25 over turns:\n%s", table([]string{"bm25"}, map[string][]outcome{"bm25": outs}))
	if verbose() {
		for _, o := range outs {
			if !o.within(cutoff) {
				t.Logf("BM25 miss %s [%s] %q -> want %s (rank %d; 0 = no word matched), got %v\n    evidence: %s",
					o.q.ID, o.q.Kind, o.q.Text, o.q.SessionID, o.deepRank, o.top, o.q.Evidence)
			}
		}
	}
}

func bm25Outcomes(d *Dataset) []outcome {
	index := map[string]*bm25Index{}
	for i := range d.Facilitators {
		index[d.Facilitators[i].Key] = newBM25(&d.Facilitators[i])
	}
	var outs []outcome
	for _, q := range d.Questions {
		ranked := index[q.Facilitator].rank(q.Text)
		o := newOutcome(q, ranked[:min(depth, len(ranked))])
		for i, s := range ranked {
			if s == q.SessionID {
				o.deepRank = i + 1
				break
			}
		}
		outs = append(outs, o)
	}
	return outs
}

// sharesKeyword reports whether the question has a content word of the
// evidence other than a learner's name, comparing the first five letters
// so that "volunteering" keeps "volunteer".
func sharesKeyword(question, evidence string, f *Facilitator) bool {
	names := map[string]bool{}
	for _, l := range f.Learners {
		names[strings.ToLower(l.Name)] = true
	}
	stem := func(w string) string { return w[:min(5, len(w))] }
	in := map[string]bool{}
	for _, w := range Words(evidence) {
		in[stem(w)] = true
	}
	for _, w := range Words(question) {
		if len(w) >= 3 && !questionStopwords[w] && !names[w] && in[stem(w)] {
			return true
		}
	}
	return false
}

// dump writes the set as JSON, one file per facilitator plus the
// questions, for reading the data by eye.
func dump(t *testing.T, dir string, d Dataset) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, v any) {
		raw, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range d.Facilitators {
		write(f.Key+".json", f)
	}
	write("questions.json", d.Questions)
	t.Logf("dataset written to %s", dir)
}
