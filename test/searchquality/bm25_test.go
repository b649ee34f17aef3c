package searchquality

import (
	"cmp"
	"math"
	"slices"
)

// bm25Index is the reference point the benchmark quotes ("plain BM25 over
// turns ≈ 87%"): every turn is a document, words are lower-case letter and
// digit runs with no stemming and no stopword list, k1 = 1.2, b = 0.75,
// and a session scores its best turn. One index per facilitator, as search
// only ever sees one facilitator's conversations.
type bm25Index struct {
	k1, b   float64
	docs    []bm25Doc
	df      map[string]int
	avgLen  float64
	session []string // session id per doc
}

type bm25Doc struct {
	tf  map[string]int
	len int
}

func newBM25(f *Facilitator) *bm25Index {
	ix := &bm25Index{k1: 1.2, b: 0.75, df: map[string]int{}}
	total := 0
	for _, s := range f.Sessions {
		for _, t := range s.Turns {
			words := Words(t.Content)
			d := bm25Doc{tf: map[string]int{}, len: len(words)}
			for _, w := range words {
				if d.tf[w] == 0 {
					ix.df[w]++
				}
				d.tf[w]++
			}
			total += d.len
			ix.docs = append(ix.docs, d)
			ix.session = append(ix.session, s.ID)
		}
	}
	ix.avgLen = float64(total) / float64(len(ix.docs))
	return ix
}

// rank returns session ids, best first. Query words count once each, as
// a search box treats "the the" like "the". Ties go to the later session,
// as in the service, which breaks ties by recency.
func (ix *bm25Index) rank(query string) []string {
	// Distinct words in a fixed order: summing in map order would make
	// exact ties (identical turns in two sessions) break differently from
	// run to run.
	var terms []string
	for _, w := range Words(query) {
		if !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	}
	n := float64(len(ix.docs))
	best := map[string]float64{}
	order := map[string]int{}
	for i, d := range ix.docs {
		score := 0.0
		for _, w := range terms {
			tf := float64(d.tf[w])
			if tf == 0 {
				continue
			}
			df := float64(ix.df[w])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += idf * tf * (ix.k1 + 1) / (tf + ix.k1*(1-ix.b+ix.b*float64(d.len)/ix.avgLen))
		}
		s := ix.session[i]
		order[s] = i
		if score > 0 && score > best[s] {
			best[s] = score
		}
	}
	var ids []string
	for s := range best {
		ids = append(ids, s)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(best[b], best[a]); c != 0 {
			return c
		}
		return cmp.Compare(order[b], order[a])
	})
	return ids
}
