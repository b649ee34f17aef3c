package migrations_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
)

// letterWord spells n in base 26 with letters, after a common prefix, so
// that each n gives a distinct word the english stemmer keeps whole.
func letterWord(n int) string {
	word := []byte("zq")
	for {
		word = append(word, byte('a'+n%26))
		n /= 26
		if n == 0 {
			return string(word)
		}
	}
}

// TestArchivedSearchVectorStaysInTheRow checks migration 0008: when a
// ten-turn session is archived, its search vector, which every search
// reads, stays in the row, although it is bigger than the 2 KB past which
// Postgres would move it to the TOAST table by default.
func TestArchivedSearchVectorStaysInTheRow(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID

	// Ten turns of about a kilobyte: ten words of their own each and a
	// sentence said again and again, so the vector passes 2 KB while the
	// turns compress to a few hundred bytes and the row fits in 4 KB.
	var turns []turn
	for i := range 10 {
		var words []string
		for j := range 10 {
			words = append(words, letterWord(i*10+j))
		}
		words = append(words, strings.Repeat("We went over the plan for the week at home. ", 20))
		turns = append(turns, turn{[]string{"user", "assistant"}[i%2], strings.Join(words, " ")})
	}
	asService(t, pool, a, func(tx pgx.Tx) {
		createConversation(t, tx, a, nil, "")
		postTurns(t, tx, a, nil, turns...)
		apptest.Exec(t, tx, `delete from public.conversation_updates where facilitator_id = $1::uuid`, a)
	})

	asSuperuser(t, pool, func(tx pgx.Tx) {
		vectorBytes := apptest.Scalar[int](t, tx, `select pg_column_size(search_vector)
			from public.conversation_history_archive where facilitator_id = $1::uuid`, a)
		if vectorBytes <= 2100 {
			t.Fatalf("the search vector takes %d bytes; the test needs one over 2 KB", vectorBytes)
		}
		toastTable := apptest.Scalar[string](t, tx, `select reltoastrelid::regclass::text from pg_class
			where oid = 'public.conversation_history_archive'::regclass`)
		// Each value moved out of a row has a chunk_id of its own.
		if moved := apptest.Scalar[int](t, tx, `select count(distinct chunk_id) from `+toastTable); moved != 0 {
			t.Errorf("%d values of the archived row went to the TOAST table, want none", moved)
		}
	})
}
