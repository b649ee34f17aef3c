package mentor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestQuestionsThatAskWhenSomethingHappened(t *testing.T) {
	for question, want := range map[string]bool{
		"When did Evan meet his future wife?":             true,
		"When did Emma start piano lessons?":              true,
		"How long ago did Max break his arm?":             true,
		"how long has Zoe been in the choir":              true,
		"When was Mia diagnosed with asthma?":             true,
		"when were the kids at Yellowstone":               true,
		"Since when does Emma read on her own?":           true,
		"What year did we move to Tucson?":                true,
		"which month was the recital":                     true,
		"Do you remember when did Leo stop napping?":      true,
		"WHEN DID LEO LOSE HIS FIRST TOOTH":               true,
		"What do I do when Emma cries at bedtime?":        false,
		"When does Emma have to take her books back?":     false,
		"When is the best time to start chores?":          false,
		"How long should homework take?":                  false,
		"what did we say about the dog":                   false,
		"Emma's piano teacher":                            false,
		"When did we talk about Emma's piano teacher?":    false,
		"When did I tell you about Max's stitches?":       false,
		"When was it that I mentioned the science fair?":  false,
		"how long ago did we go over the reading log":     false,
		"What day did we discuss the field trip?":         false,
		"When did I first bring up the bedtime routine?":  false,
		"when did you and I chat about Noah's allowance?": false,
	} {
		if got := AsksWhen(question); got != want {
			t.Errorf("AsksWhen(%q) = %v, want %v", question, got, want)
		}
	}
}

func TestTurnsThatSayWhen(t *testing.T) {
	said := time.Date(2024, time.June, 12, 18, 0, 0, 0, time.UTC)
	for text, want := range map[string]bool{
		"Max broke his wrist last week on the trampoline.":          true,
		"Yesterday, Emma finally rode without training wheels!":     true,
		"We moved to Tucson two years ago.":                         true,
		"Emma started piano in March.":                              true,
		"The recital was on 4 May.":                                 true,
		"Zoe has been in the choir since 2021.":                     true,
		"Leo had a nightmare last night.":                           true,
		"We went to the lake last weekend.":                         true,
		"Noah met Desmond back in November 2023.":                   true,
		"The other day Sam asked about the tooth fairy.":            true,
		"Piano lessons are on Friday after school.":                 false,
		"Emma's wrist still aches and the cast itches.":             false,
		"Emma practices piano every week.":                          false,
		"Max rode his bike without training wheels around Easter.":  false,
		"Emma may be ready for chapter books.":                      false,
		"It was a rough afternoon, but we got through the reading.": false,
	} {
		if got := StatesTime(text, said); got != want {
			t.Errorf("StatesTime(%q) = %v, want %v", text, got, want)
		}
	}
}

// rankedStore answers every search with its results, best first, cut to
// the limit asked, and records the limit.
type rankedStore struct {
	Store
	results []SearchResult
	limit   int
}

func (s *rankedStore) Search(_ context.Context, q SearchQuery) ([]SearchResult, error) {
	s.limit = q.Limit
	return append([]SearchResult(nil), s.results[:min(q.Limit, len(s.results))]...), nil
}

func result(id string, rank float64, turn string) SearchResult {
	matches, _ := json.Marshal([]Turn{{Role: RoleUser, Content: turn, CreatedAt: time.Date(2024, time.June, 12, 18, 0, 0, 0, time.UTC)}})
	return SearchResult{ID: id, Rank: rank, Matches: matches}
}

// A when question reads twice the results asked for and moves up those
// whose best turn says when, by a share of the best score: past those its
// words rank about as well, not past one they rank much better. Any other
// question gets the store's order as it is.
func TestAWhenQuestionPrefersResultsWhoseBestTurnSaysWhen(t *testing.T) {
	store := &rankedStore{results: []SearchResult{
		result("much-better", 10, "Max's wrist, the cast on his wrist, and the wrist brace: all he talks about."),
		result("cast", 6, "Max's wrist still aches and the cast itches at night."),
		result("scar", 5.5, "Max keeps showing his wrist scar to everyone."),
		result("dated-near", 5, "Max broke his wrist last week on the trampoline."),
		result("brace", 4, "Max's wrist brace came off."),
		result("dated-far", 1, "Max hurt his wrist in 2022."),
	}}
	svc := NewService(store, nil, nil)
	order := func(question string, limit int) string {
		t.Helper()
		results, err := svc.Search(context.Background(), SearchQuery{Text: question, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range results {
			ids = append(ids, r.ID)
		}
		return fmt.Sprint(ids)
	}

	if got, want := order("When did Max break his wrist?", 3), "[much-better dated-near cast]"; got != want {
		t.Errorf("when question: %s, want %s", got, want)
	}
	if store.limit != 6 {
		t.Errorf("a when question with a limit of 3 read %d results, want 6", store.limit)
	}
	if got, want := order("Max wrist", 3), "[much-better cast scar]"; got != want {
		t.Errorf("words: %s, want %s", got, want)
	}
	if store.limit != 3 {
		t.Errorf("a question by words with a limit of 3 read %d results, want 3", store.limit)
	}
	order("When did Max break his wrist?", 50)
	if store.limit != 50 {
		t.Errorf("a when question with a limit of 50 read %d results, want 50", store.limit)
	}
	order("When did Max break his wrist?", 15)
	if store.limit != whenDepth {
		t.Errorf("a when question with a limit of 15 read %d results, want %d", store.limit, whenDepth)
	}
}

// BenchmarkStatesTime times reading a turn for a time, which a when
// question does for each result it reads: a mentor's reply of a couple of
// thousand characters, the time in its last sentence.
//
//	go test ./mentor -run '^$' -bench StatesTime
func BenchmarkStatesTime(b *testing.B) {
	said := time.Date(2024, time.June, 12, 18, 0, 0, 0, time.UTC)
	turn := strings.Repeat("Keep the routine simple and predictable so Emma knows what to expect; this helps "+
		"with homework and reading at home, and the other kids follow. ", 15) + "She broke her wrist last week."
	for b.Loop() {
		if !StatesTime(turn, said) {
			b.Fatal("no time")
		}
	}
}
