package tokens

import "testing"

// Counts of cl100k_base, as OpenAI's tokenizer gives them.
func TestCountIsTheModelsTokenizer(t *testing.T) {
	for text, want := range map[string]int{
		"":            0,
		"hello world": 2,
		"Alex connected the discriminant to the shape of the graph": 11,
		"Ça va? 数学": 6,
	} {
		if got := Count(text); got != want {
			t.Errorf("Count(%q) = %d, want %d", text, got, want)
		}
	}
}
