package summarizer

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// corpus holds the word statistics of the turns being summarised. Keys are
// stems; a bigram's key is its two stems joined by a space.
type corpus struct {
	name    map[string]bool   // stems of the learner's name
	df      map[string]int    // how many turns (and previous summary) hold it
	tf      map[string]int    // total occurrences
	first   map[string]int    // position of first occurrence, for stable ties
	surface map[string]string // the form shown as a topic
	pos     int
	inTurn  map[string]bool
}

func newCorpus(learnerName string) *corpus {
	c := &corpus{
		name: map[string]bool{}, df: map[string]int{}, tf: map[string]int{},
		first: map[string]int{}, surface: map[string]string{}, inTurn: map[string]bool{},
	}
	for _, w := range tokens(learnerName) {
		c.name[stem(w)] = true
	}
	return c
}

// addSentence records the words of one sentence and returns its distinct
// content stems. Two adjacent topic words are also counted as a phrase, so
// that "long division" can be named as such rather than as "long".
func (c *corpus) addSentence(words []string) []string {
	var stems []string
	for i, w := range words {
		if !isContent(w) {
			continue
		}
		st := stem(w)
		c.see(st, w)
		if !slices.Contains(stems, st) {
			stems = append(stems, st)
		}
		if i+1 < len(words) && c.topical(w) && c.topical(words[i+1]) {
			c.see(st+" "+stem(words[i+1]), w+" "+words[i+1])
		}
	}
	return stems
}

func (c *corpus) see(key, surface string) {
	c.tf[key]++
	if _, ok := c.first[key]; !ok {
		c.first[key], c.surface[key] = c.pos, surface
	}
	c.pos++
	c.inTurn[key] = true
}

// endTurn closes a turn for the document frequencies.
func (c *corpus) endTurn() {
	for key := range c.inTurn {
		c.df[key]++ // increments only: map order cannot change the result
	}
	clear(c.inTurn)
}

// addPrevious counts the previous summary as one more document. A word that
// was already in it is an ongoing theme, which is exactly what recurring
// across turns is meant to reward.
func (c *corpus) addPrevious(prev string) {
	for _, st := range contentStems(prev) {
		if c.df[st] > 0 {
			c.df[st]++
		}
	}
}

// informativeness rewards sentences made of words that recur across turns:
// the sum of their document frequencies, divided by the square root of their
// number so that a long ramble does not beat a dense sentence.
func (c *corpus) informativeness(stems []string) float64 {
	sum := 0
	for _, st := range stems {
		sum += c.df[st]
	}
	return float64(sum) / math.Sqrt(float64(len(stems)))
}

// topical reports whether a word may name a topic. Cue and feeling words are
// reported as concerns, advice and tone instead, and the learner's name has
// a line of its own.
func (c *corpus) topical(w string) bool {
	if !isContent(w) {
		return false
	}
	st := stem(w)
	return !c.name[st] && !notTopics[st] && !notTopics[w] &&
		!concernCues[w] && !adviceCues[w] && !actionCues[w] && feelings[w] == ""
}

// topics returns up to n phrases naming the conversation. Phrases that recur
// come first, then single words not already part of a chosen phrase; each
// group is ranked by the number of turns it spans, then by frequency, then
// by first appearance (positions are unique, so the order is total).
func (c *corpus) topics(n int) []string {
	var phrases, words []string
	for key, surf := range c.surface {
		if strings.Contains(key, " ") {
			if c.tf[key] >= 2 {
				phrases = append(phrases, key)
			}
		} else if c.topical(surf) {
			words = append(words, key)
		}
	}
	rank := func(a, b string) int {
		if x := cmp.Compare(c.df[b], c.df[a]); x != 0 {
			return x
		}
		if x := cmp.Compare(c.tf[b], c.tf[a]); x != 0 {
			return x
		}
		return cmp.Compare(c.first[a], c.first[b])
	}
	slices.SortFunc(phrases, rank)
	slices.SortFunc(words, rank)

	var out []string
	covered := map[string]bool{}
	for _, key := range phrases {
		if len(out) >= (n+1)/2 {
			break // leave room for single words
		}
		a, b, _ := strings.Cut(key, " ")
		if covered[a] || covered[b] {
			continue // "long division" and "division homework": keep one
		}
		covered[a], covered[b] = true, true
		out = append(out, c.surface[key])
	}
	for _, key := range words {
		if len(out) >= n {
			break
		}
		if !covered[key] {
			out = append(out, c.surface[key])
		}
	}
	return out
}
