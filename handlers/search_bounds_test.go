package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"mentormemory/app/apptest"
)

// A search of a hundred words nobody ever used, by a facilitator whose
// vocabulary is full, corrects only a few of them: four such searches at
// once answer, and another facilitator is served meanwhile. (Before the
// caps, the same searches over a 190,000-word vocabulary ran into the
// request's time limit, and held the pool while they did.)
func TestSearchOfUnknownWordsIsBounded(t *testing.T) {
	svc, search, neighbourLearners := startWithUnknownWordSearch(t)

	var wg sync.WaitGroup
	answers := make([]apptest.Response, 6)
	for i := range answers {
		wg.Go(func() {
			request := search
			if i >= 4 {
				request = neighbourLearners
			}
			answers[i] = apptest.Client{URL: svc.URL}.Do(t, request)
		})
	}
	wg.Wait()
	for i, r := range answers {
		if r.Err != nil || r.Status != http.StatusOK {
			t.Errorf("request %d answered %s (%v), want 200", i, r, r.Err)
		}
	}
}

// Misspellings are corrected for the query's three longest unknown words
// only: five misspelt animals find the three conversations of the longest.
func TestSearchCorrectsOnlyAFewUnknownWords(t *testing.T) {
	svc, a := apptest.StartWithUser(t, apptest.Options{})
	for _, animal := range []string{"elephants", "giraffes", "penguins", "kangaroos", "crocodiles"} {
		learner := svc.NewLearner(t, a, "Learner "+animal[:3])
		svc.PostTurns(t, a, learner, apptest.Exchange("We read about "+animal+" today.", "Lovely.")...).WantStatus(http.StatusOK)
	}
	found := svc.Call(t, a.Token, http.MethodGet, "/api/conversation-memory?search="+
		url.QueryEscape("elefants girafes pengwins kangaroes crocodils"), nil).WantStatus(http.StatusOK)
	var snippets []string
	for _, r := range found.Body["results"].([]any) {
		snippets = append(snippets, r.(map[string]any)["snippet"].(string))
	}
	// Longest first: crocodils (9), kangaroes (9), then elefants (8), a tie
	// that the word's order breaks.
	want := []string{"crocodiles", "elephants", "kangaroos"}
	if len(snippets) != len(want) {
		t.Fatalf("found %d conversations %v, want the %d of %v", len(snippets), snippets, len(want), want)
	}
	for _, animal := range want {
		if !strings.Contains(strings.Join(snippets, " "), "<mark>"+animal+"</mark>") {
			t.Errorf("no conversation about %s among %v", animal, snippets)
		}
	}
}

// Text holding the characters the highlighter marks matches with cannot
// forge a mark: the snippet's marks are the matches', balanced.
func TestSnippetMarksCannotBeForged(t *testing.T) {
	svc, a := apptest.StartWithUser(t, apptest.Options{})
	svc.PostTurns(t, a, "", apptest.Exchange("Fractions \uE001 with \uE000pizza\uE000 slices \uE001.", "Lovely.")...).WantStatus(http.StatusOK)
	found := svc.Call(t, a.Token, http.MethodGet, "/api/conversation-memory?search=fractions", nil).WantStatus(http.StatusOK)
	results := found.Body["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("results %v", results)
	}
	snippet := results[0].(map[string]any)["snippet"].(string)
	if strings.Count(snippet, "<mark>") != 1 || strings.Count(snippet, "</mark>") != 1 || !strings.Contains(snippet, "<mark>Fractions</mark>") {
		t.Fatalf("snippet %q: want only the match marked", snippet)
	}
}

// startWithUnknownWordSearch runs the service with two facilitators: A,
// who has a conversation and a full vocabulary (20,000 words), and a
// neighbour. It returns A's search of 100 four-letter made-up words (499
// characters, inside the limit) and the neighbour's GET /api/learners.
func startWithUnknownWordSearch(tb testing.TB) (svc *apptest.Service, search, neighbourLearners apptest.Request) {
	tb.Helper()
	svc, a := apptest.StartWithUser(tb, apptest.Options{})
	neighbour := svc.NewUser(tb)
	svc.PostTurns(tb, a, "", apptest.Exchange("We practised fractions with pizza.", "Lovely.")...).WantStatus(http.StatusOK)
	svc.Exec(tb, `insert into public.search_vocabulary (facilitator_id, word)
		select $1::uuid, translate(lpad(g::text, 6, '0'), '0123456789', 'abcdefghij') || 'zz'
		from generate_series(1, 19990) g`, a.ID)
	words := make([]string, 100)
	for i := range words {
		words[i] = "q" + string(rune('b'+i/25)) + string(rune('a'+i%25)) + "x"
	}
	search = apptest.Request{Method: http.MethodGet, Token: a.Token,
		Path: "/api/conversation-memory?include_archive=true&search=" + url.QueryEscape(strings.Join(words, " "))}
	return svc, search, apptest.Request{Method: http.MethodGet, Path: "/api/learners", Token: neighbour.Token}
}
