package migrations_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
)

// TestOneConversationPerLearnerOrNone checks the NULLS NOT DISTINCT unique
// constraint: one active conversation per facilitator and learner, and
// one general conversation (learner_id null) per facilitator.
func TestOneConversationPerLearnerOrNone(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	b := apptest.NewUser(t, pool).ID
	var maya, sam, noah string
	asService(t, pool, a, func(tx pgx.Tx) {
		maya = createLearner(t, tx, a, "Maya")
		sam = createLearner(t, tx, a, "Sam")
	})
	asService(t, pool, b, func(tx pgx.Tx) {
		noah = createLearner(t, tx, b, "Noah")
	})

	// In order: each step runs as its facilitator after the ones before.
	steps := []struct {
		name        string
		facilitator string
		learner     *string
		want        string // SQLSTATE, "" for success
	}{
		{"A general", a, nil, ""},
		{"A second general", a, nil, uniqueViolation},
		{"A Maya", a, &maya, ""},
		{"A Maya again", a, &maya, uniqueViolation},
		{"A Sam", a, &sam, ""},
		{"B general", b, nil, ""},
		{"B second general", b, nil, uniqueViolation},
		{"B Noah", b, &noah, ""},
	}
	for _, st := range steps {
		asService(t, pool, st.facilitator, func(tx pgx.Tx) {
			_, err := tryExec(t, tx, `insert into public.conversation_updates (facilitator_id, learner_id)
				values ($1::uuid, $2::uuid)`, st.facilitator, st.learner)
			wantState(t, err, st.want, st.name)
		})
	}
	for _, tc := range []struct {
		facilitator string
		want        int64
	}{{a, 3}, {b, 2}} {
		if n := countRows(t, pool, "conversation_updates", tc.facilitator); n != tc.want {
			t.Errorf("facilitator %s has %d conversations, want %d", tc.facilitator, n, tc.want)
		}
	}

	// The store creates the record with ON CONFLICT ON CONSTRAINT ... DO
	// NOTHING, which must see the existing general conversation too.
	t.Run("store's insert-if-missing", func(t *testing.T) {
		for _, learner := range []*string{nil, &maya} {
			asService(t, pool, a, func(tx pgx.Tx) {
				n := apptest.Exec(t, tx, `insert into public.conversation_updates (facilitator_id, learner_id)
					values ($1::uuid, $2::uuid)
					on conflict on constraint conversation_updates_one_per_learner do nothing`, a, learner)
				if n != 0 {
					t.Errorf("learner %v: inserted %d rows over the existing conversation, want 0", deref(learner), n)
				}
			})
		}
	})
}

// The database holds the service's own writes to the limits the API
// applies (migration 0013), so a bug cannot store what no request could
// send.
func TestServiceWritesKeepTheAPILimits(t *testing.T) {
	pool := newDatabase(t)
	a := seedFacilitator(t, pool, "Maya")
	const checkViolation = "23514"
	memory := `insert into public.learner_memories (facilitator_id, type, content, importance, confidence, source, metadata, source_turn_ids)
		values ($1::uuid, 'personal', 'Likes maps', 1, 1, 'added', $2::jsonb, $3::bigint[])`
	sixteen, seventeen := map[string]any{}, map[string]any{}
	for i := range 17 {
		if i < 16 {
			sixteen[fmt.Sprintf("k%d", i)] = "v"
		}
		seventeen[fmt.Sprintf("k%d", i)] = "v"
	}
	ids := func(n int) []int64 { return make([]int64, n) }
	for _, tc := range []struct {
		name, sql string
		args      []any
		want      string
	}{
		{"turn of 20000 characters", `insert into public.conversation_turns (facilitator_id, role, content) values ($1::uuid, 'user', repeat('a', 20000))`, nil, ""},
		{"turn of 20001 characters", `insert into public.conversation_turns (facilitator_id, role, content) values ($1::uuid, 'user', repeat('a', 20001))`, nil, checkViolation},
		{"empty turn", `insert into public.conversation_turns (facilitator_id, role, content) values ($1::uuid, 'user', '')`, nil, checkViolation},
		{"16 metadata keys", memory, []any{sixteen, ids(100)}, ""},
		{"17 metadata keys", memory, []any{seventeen, ids(0)}, checkViolation},
		{"metadata value of 201 characters", memory, []any{map[string]any{"note": strings.Repeat("a", 201)}, ids(0)}, checkViolation},
		{"nested metadata", memory, []any{map[string]any{"note": map[string]any{"a": 1}}, ids(0)}, checkViolation},
		{"metadata key in capitals", memory, []any{map[string]any{"Note": "a"}, ids(0)}, checkViolation},
		{"101 source turns", memory, []any{map[string]any{}, ids(101)}, checkViolation},
	} {
		asService(t, pool, a.id, func(tx pgx.Tx) {
			_, err := tryExec(t, tx, tc.sql, append([]any{a.id}, tc.args...)...)
			wantState(t, err, tc.want, tc.name)
		})
	}
}
