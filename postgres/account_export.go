package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
	"mentormemory/migrations"
)

// exportTable is one kind of record of an account archive: its type and the
// query reading the caller's rows of it, one JSON object a row. The query
// takes the facilitator ($1) and the learner ($2; null for every learner
// and the general conversation), and leaves out facilitator_id (the
// importer's account replaces it) and what the database derives from the
// rest (search vectors, the vocabulary), which an import rebuilds.
//
// A table of the facilitator's is one entry here, placed after the tables
// its rows refer to; importing it is one entry of importTables.
type exportTable struct {
	Type string
	SQL  string
}

// inScope is the condition on a row's learner_id for an export of $2.
const inScope = `($2::uuid is null or t.learner_id = $2::uuid)`

var exportTables = []exportTable{
	{"learner", `select (to_jsonb(t) - 'facilitator_id')::text from public.learners t
		where t.facilitator_id = $1::uuid and ($2::uuid is null or t.id = $2::uuid)
		order by t.created_at, t.id`},
	// Whether the account, and each learner, is learnt from; the account's
	// in an export of the account only.
	{"account_settings", `select (to_jsonb(t) - 'facilitator_id')::text from public.facilitator_settings t
		where t.facilitator_id = $1::uuid and $2::uuid is null`},
	{"learner_settings", `select (to_jsonb(t) - 'facilitator_id')::text from public.learner_settings t
		where t.facilitator_id = $1::uuid and ` + inScope + `
		order by t.learner_id`},
	{"session", `select (to_jsonb(t) - 'facilitator_id')::text from public.mentor_sessions t
		where t.facilitator_id = $1::uuid and ` + inScope + `
		order by t.started_at, t.id`},
	{"conversation", `select (to_jsonb(t) - array['facilitator_id', 'search_vector', 'summary_vector', 'turns_vector', 'turns_bytes'])::text
		from public.conversation_updates t
		where t.facilitator_id = $1::uuid and ` + inScope + `
		order by t.created_at, t.id`},
	// Its range of log ids names turns of this account only: the turns
	// name their archive instead.
	{"archived_conversation", `select (to_jsonb(t) - array['facilitator_id', 'search_vector', 'first_turn_id', 'last_turn_id'])::text
		from public.conversation_history_archive t
		where t.facilitator_id = $1::uuid and ` + inScope + `
		order by t.archived_at, t.id`},
	// Every turn ever received, in the order received; archive_id names the
	// archived conversation a turn was moved to (archive_of, migration
	// 0037).
	{"turn", `select (to_jsonb(t) - array['facilitator_id', 'content_vector']
			|| jsonb_build_object('archive_id', ` + migrations.ArchiveOf("t") + `))::text
		from public.conversation_turns t
		where t.facilitator_id = $1::uuid and ` + inScope + `
		order by t.id`},
	// A memory's type is memory_type here, as "type" names the record's.
	{"memory", `select (to_jsonb(t) - array['facilitator_id', 'search_vector', 'type']
			|| jsonb_build_object('memory_type', t.type))::text
		from public.learner_memories t
		where t.facilitator_id = $1::uuid and ` + inScope + `
		order by t.created_at, t.id`},
	{"memory_history", `select (to_jsonb(t) - 'facilitator_id')::text from public.memory_history t
		where t.facilitator_id = $1::uuid and ` + inScope + `
		order by t.id`},
	{"session_opening", `select (to_jsonb(t) - 'facilitator_id')::text from public.session_openings t
		where t.facilitator_id = $1::uuid and ` + inScope + `
		order by t.computed_at`},
	// In the shape of mentor.Profile, which the export completes with the
	// profile as Markdown.
	{mentor.ProfileRecordType, `select (to_jsonb(t) - 'facilitator_id' || jsonb_build_object('learner_name', l.name))::text
		from public.learner_profiles t
		join public.learners l on l.facilitator_id = t.facilitator_id and l.id = t.learner_id
		where t.facilitator_id = $1::uuid and ` + inScope + `
		order by t.learner_id`},
	{"consolidation_run", `select (to_jsonb(t) - 'facilitator_id')::text from public.consolidation_runs t
		where t.facilitator_id = $1::uuid and ` + inScope + `
		order by t.created_at, t.id`},
	// The receipts of the learners erased (counts, no content), in an export
	// of the account; an import counts them as skipped (mentor.ImportCount).
	{mentor.ErasureRecordType, `select (to_jsonb(t) - 'facilitator_id')::text from public.erasure_receipts t
		where t.facilitator_id = $1::uuid and $2::uuid is null
		order by t.erased_at, t.id`},
}

// exportTimeout bounds an export's transaction and each of its statements.
// An export reads every row of a facilitator (100,000 turns in about a
// second), and a statement's time includes waiting for the client to take
// the rows, as they go out as the answer is written; a client that stops
// reading is cut off sooner, by the answer's write deadline.
const exportTimeout = 5 * time.Minute

// Export streams the caller's records, table by table, from one snapshot:
// a read-only repeatable-read transaction. Rows are read from the server
// as they are handed on, so memory holds one row at a time.
func (s *Store) Export(ctx context.Context, learnerID *string, emit func(mentor.ExportRecord) error) error {
	long := s.longTx(exportTimeout, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	return long.inTx(ctx, func(tx pgx.Tx, me string) error {
		if _, err := requireLearner(ctx, tx, me, learnerID); err != nil {
			return err
		}
		for _, table := range exportTables {
			if err := exportRows(ctx, tx, table, me, learnerID, emit); err != nil {
				return err
			}
		}
		return nil
	})
}

func exportRows(ctx context.Context, tx pgx.Tx, table exportTable, me string, learnerID *string, emit func(mentor.ExportRecord) error) error {
	rows, err := tx.Query(ctx, table.SQL, me, learnerID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		// The jsonb's text, as the server sent it: valid until the next row.
		if err := emit(mentor.ExportRecord{Type: table.Type, Fields: rows.RawValues()[0]}); err != nil {
			return err
		}
	}
	return rows.Err()
}

// longTx is the store for one long transaction: an export or an import,
// which may take minutes where a request's take seconds. Its statements
// may run as long as the transaction.
func (s *Store) longTx(timeout time.Duration, opts pgx.TxOptions) *Store {
	long := *s
	long.txTimeout = timeout
	long.txOptions = opts
	long.statementTimeout = fmt.Sprint(timeout.Milliseconds())
	return &long
}
