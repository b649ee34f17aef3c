package migrations_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
)

// madeUpWords is n distinct made-up words of letters only, numbered from
// first (000012 is aaaabczz), as one turn's text.
func madeUpWords(first, n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = digitsAsLetters.Replace(fmt.Sprintf("%06d", first+i)) + "zz"
	}
	return strings.Join(words, " ")
}

var digitsAsLetters = strings.NewReplacer("0", "a", "1", "b", "2", "c", "3", "d", "4", "e",
	"5", "f", "6", "g", "7", "h", "8", "i", "9", "j")

// A facilitator's vocabulary keeps at most 20,000 words: past it, the
// oldest leave until 18,000 remain, and the words just said stay.
func TestSearchVocabularyIsCapped(t *testing.T) {
	pool := newDatabase(t)
	a := seedFacilitator(t, pool, "Maya")
	b := seedFacilitator(t, pool, "Noah")
	others := countRows(t, pool, "search_vocabulary", b.id)
	// 2,000 words a turn (18,000 characters), each turn in a transaction of
	// its own so that the words' ages differ.
	for turn := range 11 {
		asService(t, pool, a.id, func(tx pgx.Tx) {
			apptest.Exec(t, tx, `insert into public.conversation_turns (facilitator_id, role, content)
				values ($1::uuid, 'user', $2)`, a.id, madeUpWords(turn*2000, 2000))
		})
	}
	// The tenth turn took it past 20,000: the seed's words and the first
	// made-up ones left, down to 18,000; the eleventh's came in after.
	if n := countRows(t, pool, "search_vocabulary", a.id); n != 20000 {
		t.Fatalf("the vocabulary holds %d words after 22,000 new ones, want 20,000", n)
	}
	for _, tc := range []struct {
		word string
		kept bool
	}{{"fractions", false}, {"aaaaaazz", false}, {"aabfaazz", false}, {"abaaaazz", true}, {"acbjjjzz", true}} {
		kept := apptest.Scalar[bool](t, pool, `select exists (select 1 from public.search_vocabulary
			where facilitator_id = $1::uuid and word = $2)`, a.id, tc.word)
		if kept != tc.kept {
			t.Errorf("word %s kept %v, want %v", tc.word, kept, tc.kept)
		}
	}
	if n := countRows(t, pool, "search_vocabulary", b.id); n != others {
		t.Errorf("another facilitator's vocabulary went from %d to %d words", others, n)
	}

	// Posts that add a word or two are checked against the cap one time in
	// eight (migration 0062): a hundred of them past it bring it back
	// (all hundred unchecked: one chance in 600,000).
	for turn := range 100 {
		asService(t, pool, a.id, func(tx pgx.Tx) {
			apptest.Exec(t, tx, `insert into public.conversation_turns (facilitator_id, role, content)
				values ($1::uuid, 'user', $2)`, a.id, madeUpWords(30000+turn, 1))
		})
	}
	if n := countRows(t, pool, "search_vocabulary", a.id); n > 18100 {
		t.Errorf("the vocabulary holds %d words after a hundred posts past its cap, each with a new word; want it trimmed to at most 18,100", n)
	}
}
