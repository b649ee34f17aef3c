package textgen

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestFill(t *testing.T) {
	values := map[string]string{"Name": "Emma", "skill": "fractions", "empty": ""}
	value := func(slot string) string { return values[slot] }
	for tmpl, want := range map[string]string{
		"":                                  "",
		"no slots at all":                   "no slots at all",
		"{Name} struggles with {skill}.":    "Emma struggles with fractions.",
		"{Name}{skill}":                     "Emmafractions",
		"before{empty}after":                "beforeafter",
		"{skill} and {skill} again, {Name}": "fractions and fractions again, Emma",
	} {
		if got := Fill(tmpl, value); got != want {
			t.Errorf("Fill(%q) = %q, want %q", tmpl, got, want)
		}
	}
}

func TestFillPanicsOnUnclosedSlot(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("an unclosed placeholder did not panic")
		}
	}()
	Fill("{Name} likes {skill", func(string) string { return "x" })
}

func TestFillPassesSlotNames(t *testing.T) {
	var asked []string
	Fill("{a} {b}{c} {a}", func(slot string) string { asked = append(asked, slot); return "" })
	if want := []string{"a", "b", "c", "a"}; !slices.Equal(asked, want) {
		t.Errorf("slots asked %q, want %q in order", asked, want)
	}
}

func TestCapitalize(t *testing.T) {
	for s, want := range map[string]string{
		"":                  "",
		"emma is here.":     "Emma is here.",
		"Emma is here.":     "Emma is here.",
		"élodie came.":      "Élodie came.",
		`"quoted" he said`:  `"Quoted" he said`,
		"  leading spaces":  "  Leading spaces",
		"'single' quotes":   "'Single' quotes",
		"3 times a week":    "3 times a week",
		"- a dash first":    "- a dash first",
		"   ":               "   ",
		"\xff invalid utf8": "\xff invalid utf8",
	} {
		if got := Capitalize(s); got != want {
			t.Errorf("Capitalize(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestPicksAreDeterministic(t *testing.T) {
	pool := strings.Fields("a b c d e f g h i j k l m n o p")
	draw := func(seed uint64) []string {
		r := rand.New(rand.NewPCG(seed, 1))
		var out []string
		for range 50 {
			out = append(out, Pick(r, pool), PickSkewed(r, pool))
		}
		return out
	}
	if !slices.Equal(draw(1), draw(1)) {
		t.Error("the same seed drew different words")
	}
	if slices.Equal(draw(1), draw(2)) {
		t.Error("two seeds drew the same words")
	}
}

func TestPickSkewedFavoursEarlyEntries(t *testing.T) {
	pool := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	r := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, len(pool))
	const draws = 20000
	for range draws {
		counts[PickSkewed(r, pool)]++
	}
	// P(first) = 0.1^(1/1.7) ≈ 0.26; P(last) = 1 - 0.9^(1/1.7) ≈ 0.06.
	if first, last := float64(counts[0])/draws, float64(counts[9])/draws; first < 0.23 || first > 0.29 || last < 0.04 || last > 0.08 {
		t.Errorf("first entry drawn %.3f of the time (want about 0.26), last %.3f (want about 0.06): %v", first, last, counts)
	}
	for i := 1; i < len(counts); i++ {
		if counts[i] > counts[i-1] {
			t.Errorf("entry %d drawn more often than entry %d: %v", i, i-1, counts)
		}
	}
}

func TestPickUsesEveryEntry(t *testing.T) {
	pool := []string{"x", "y", "z"}
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[string]int{}
	for range 3000 {
		seen[Pick(r, pool)]++
	}
	for _, w := range pool {
		if seen[w] < 900 || seen[w] > 1100 {
			t.Errorf("%q drawn %d times of 3000, want about 1000: %v", w, seen[w], seen)
		}
	}
}
