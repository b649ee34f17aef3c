package migrations_test

import (
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
	asUser(t, pool, a, func(tx pgx.Tx) {
		maya = createLearner(t, tx, a, "Maya")
		sam = createLearner(t, tx, a, "Sam")
	})
	asUser(t, pool, b, func(tx pgx.Tx) {
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
		asUser(t, pool, st.facilitator, func(tx pgx.Tx) {
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
			asUser(t, pool, a, func(tx pgx.Tx) {
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
