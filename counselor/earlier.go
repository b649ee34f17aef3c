package counselor

import (
	"cmp"
	"math"
	"slices"

	"mentormemory/mentor"
)

// Bounds of the evicted turns a message that refers back brings back.
const (
	// maxBroughtBack is how many come back at most.
	maxBroughtBack = 3
	// earlierRelevanceFloor is the least BM25 score (rankEarlier) of a
	// turn that comes back: about one word of the message that few turns
	// of the session have (in under one in eight of them), or two less
	// rare. A word most turns have scores near nothing, so a turn that
	// shares only such words with the message stays out.
	earlierRelevanceFloor = 2.0
)

// BM25's usual parameters: how soon a word's repeats stop counting, and
// how much a long turn's words count for less.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// bringBack chooses the evicted turns (the first evicted of history) that
// come back for message, which refers back to them: the best matches of
// rankEarlier, as many as fit in room tokens, best first; in the order they
// were said.
func bringBack(message string, history []mentor.Turn, evicted, room int) []mentor.Turn {
	var chosen []int
	for _, i := range rankEarlier(message, history, evicted) {
		if cost := countTokens(earlierLine(history[i])); cost <= room {
			room -= cost
			chosen = append(chosen, i)
		}
	}
	slices.Sort(chosen)
	back := make([]mentor.Turn, len(chosen))
	for j, i := range chosen {
		back[j] = history[i]
	}
	return back
}

// rankEarlier ranks the first candidates turns of history by how well
// they match what message refers back to (its topic words, without the
// words by which it refers back): BM25 over the turns' topic words, each
// word's rarity taken across the whole history. It returns the indices of
// at most maxBroughtBack of them that score at least
// earlierRelevanceFloor, best first.
func rankEarlier(message string, history []mentor.Turn, candidates int) []int {
	query := map[string]bool{}
	for _, w := range mentor.TopicWords(mentor.WithoutBackReferences(message)) {
		query[w] = true
	}
	if len(query) == 0 || candidates == 0 {
		return nil
	}
	// Of each turn, its length in topic words and how often it says each
	// word of the query; of each query word, how many turns say it.
	lengths := make([]int, len(history))
	said := make([]map[string]int, len(history))
	turnsSaying := map[string]int{}
	total := 0
	for i, t := range history {
		words := mentor.TopicWords(t.Content)
		lengths[i] = len(words)
		total += len(words)
		for _, w := range words {
			if query[w] {
				if said[i] == nil {
					said[i] = map[string]int{}
				}
				if said[i][w] == 0 {
					turnsSaying[w]++
				}
				said[i][w]++
			}
		}
	}
	n := float64(len(history))
	average := max(float64(total)/n, 1)
	type scored struct {
		turn  int
		score float64
	}
	var ranked []scored
	for i := range candidates {
		score := 0.0
		for w, tf := range said[i] {
			idf := math.Log(1 + (n-float64(turnsSaying[w])+0.5)/(float64(turnsSaying[w])+0.5))
			f := float64(tf)
			score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(lengths[i])/average))
		}
		if score >= earlierRelevanceFloor {
			ranked = append(ranked, scored{i, score})
		}
	}
	// Of equal scores, the later turn: it is nearer to now.
	slices.SortFunc(ranked, func(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.turn, a.turn)) })
	best := make([]int, 0, maxBroughtBack)
	for _, r := range ranked[:min(len(ranked), maxBroughtBack)] {
		best = append(best, r.turn)
	}
	return best
}
