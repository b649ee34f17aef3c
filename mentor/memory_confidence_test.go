package mentor

import "testing"

func TestContradictsTellsAChangedFactFromARepeat(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"Emma struggles with long division", "Emma no longer struggles with long division", true},
		{"Emma struggles with long division", "Emma used to struggle with long division", true},
		{"Alex is afraid of fractions", "Alex isn't afraid of fractions anymore", true},
		{"Max doesn't like loud rooms", "Max likes loud rooms now", true},
		{"Sam stopped biting his nails", "Sam bites his nails", true},
		{"Emma struggles with long division", "Emma struggles with long division!", false},
		{"Max doesn't like loud rooms", "Max does not like loud rooms at all", false},
		// "Nothing" and "note" hold no negation of their own.
		{"Alex takes a note of nothing new", "Alex takes a note of nothing new today", false},
	} {
		if got := Contradicts(tc.a, tc.b); got != tc.want {
			t.Errorf("Contradicts(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := Contradicts(tc.b, tc.a); got != tc.want {
			t.Errorf("Contradicts(%q, %q) = %v, want %v (either order)", tc.b, tc.a, got, tc.want)
		}
	}
}
