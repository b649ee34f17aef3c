package counselor

import (
	"fmt"
	"hash/maphash"
	"testing"

	"mentormemory/tokens"
)

// Remembered counts are the tokenizer's, and the memory of them stays
// within two generations however many texts are counted.
func TestRememberedCountsAreTheTokenizersWithinTwoGenerations(t *testing.T) {
	c := &tokenCounts{seed: counts.seed, current: map[uint64]int{}}
	text := "Emma read aloud with expression — «encore»! 🎉"
	if got, want := c.count(text), tokens.Count(text); got != want || c.count(text) != want {
		t.Fatalf("count = %d, want the tokenizer's %d, once counted and once remembered", got, want)
	}
	for i := range 2*countedTexts + 10 {
		c.count(fmt.Sprint("turn ", i))
	}
	if len(c.current) > countedTexts || len(c.previous) > countedTexts {
		t.Fatalf("%d and %d texts remembered, over %d a generation", len(c.current), len(c.previous), countedTexts)
	}
	if _, ok := c.current[maphash.String(c.seed, fmt.Sprint("turn ", 2*countedTexts+9))]; !ok {
		t.Fatal("the latest text should be remembered")
	}
}
