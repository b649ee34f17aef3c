package counselor

import (
	"hash/maphash"
	"sync"

	"mentormemory/tokens"
)

// countedTexts is how many texts' counts one generation of the cache
// holds: some hundred long sessions' turns, about a megabyte.
const countedTexts = 20_000

// tokenCounts remembers the tokens of the texts the counselor counted. A
// session's turns come back with every message, and counting them again
// (about a millisecond per thousand tokens) would be most of what the
// service adds to a reply's time to its first token. Two generations bound
// it: when the current one is full it becomes the previous, whose texts
// are kept only if they are counted again.
type tokenCounts struct {
	mu                sync.Mutex
	seed              maphash.Seed
	current, previous map[uint64]int
}

var counts = &tokenCounts{seed: maphash.MakeSeed(), current: map[uint64]int{}}

// countTokens is tokens.Count of text, remembered. Texts are known by a
// 64-bit hash: two texts that collide, about once in 10^19 pairs, would
// only be counted alike.
func countTokens(text string) int {
	return counts.count(text)
}

func (c *tokenCounts) count(text string) int {
	key := maphash.String(c.seed, text)
	c.mu.Lock()
	n, ok := c.current[key]
	if ok {
		c.mu.Unlock()
		return n
	}
	n, ok = c.previous[key]
	c.mu.Unlock()
	if !ok {
		// Counted outside the lock: other replies need not wait for it.
		n = tokens.Count(text)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.current) >= countedTexts {
		c.previous, c.current = c.current, map[uint64]int{}
	}
	c.current[key] = n
	return n
}
