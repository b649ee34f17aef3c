package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"mentormemory/mentor"
)

// A request that finds its learner erased under it answers Learner not
// found, from Postgres's error, which names the foreign key, and from a
// Citus worker's, which arrives without its fields, the shard's copy of
// the key named in its message alone.
func TestAnErasedLearnersForeignKeyIsLearnerNotFound(t *testing.T) {
	for _, pgErr := range []*pgconn.PgError{
		{Code: "23503", ConstraintName: "conversation_updates_facilitator_id_learner_id_fkey"},
		{Code: "23503", Message: `insert or update on table "conversation_updates_102035" violates ` +
			`foreign key constraint "conversation_updates_facilitator_id_learner_id_fkey_102035"`},
	} {
		if err := dbError(pgErr); mentor.ErrorCode(err) != mentor.CodeNotFound {
			t.Errorf("%+v: %v, want Learner not found", pgErr, err)
		}
	}
	other := &pgconn.PgError{Code: "23503", Message: `insert or update on table "learner_memories_102040" violates ` +
		`foreign key constraint "learner_memories_facilitator_id_session_id_fkey_102040"`}
	if err := dbError(other); mentor.ErrorCode(err) == mentor.CodeNotFound {
		t.Errorf("another foreign key: %v, want no Learner not found", err)
	}
}
