package migrations_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app/apptest"
	"mentormemory/migrations"
	"mentormemory/postgres/pgtest"
)

// SQLSTATE codes the tests expect.
const (
	insufficientPrivilege = "42501" // missing grant, or a row RLS refuses
	uniqueViolation       = "23505"
	foreignKeyViolation   = "23503"
)

// memoryTables are the tables of the conversation memory, each keyed by
// facilitator_id.
var memoryTables = []string{
	"learners",
	"conversation_updates",
	"conversation_turns",
	"conversation_history_archive",
	"search_vocabulary",
	"learner_memories",
	"memory_history",
	"consolidation_runs",
	"learner_profiles",
	"pending_actions",
	"mentor_sessions",
	"session_openings",
	"memory_jobs",
	"usage_counters",
}

// turn is a turn as the log stores it and the archive's jsonb holds it.
type turn struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// newDatabase runs the test in parallel with the others, each on a fresh,
// migrated database of its own.
func newDatabase(t *testing.T) *pgxpool.Pool {
	t.Helper()
	t.Parallel()
	return pgtest.NewPool(t)
}

// asService runs fn in one transaction as the service runs the user's
// request: role memory_service and the user's claims in
// request.jwt.claims, both transaction-local. The transaction commits when
// fn returns and rolls back when fn ends the test (t.Fatal) or panics.
// Statements expected to fail go through tryExec or tryScalar, which
// confine the failure to a savepoint.
func asService(t *testing.T, pool *pgxpool.Pool, userID string, fn func(tx pgx.Tx)) {
	t.Helper()
	inTx(t, pool, "memory_service", string(apptest.Claims(userID)), fn)
}

// asSignedIn runs fn as Supabase's Data API runs a signed-in user's
// request: role authenticated with the user's claims.
func asSignedIn(t *testing.T, pool *pgxpool.Pool, userID string, fn func(tx pgx.Tx)) {
	t.Helper()
	inTx(t, pool, "authenticated", string(apptest.Claims(userID)), fn)
}

// asAnon is asSignedIn for role anon, with the given claims or none ("").
func asAnon(t *testing.T, pool *pgxpool.Pool, claims string, fn func(tx pgx.Tx)) {
	t.Helper()
	inTx(t, pool, "anon", claims, fn)
}

// asSuperuser runs fn in one transaction as the pool's superuser.
func asSuperuser(t *testing.T, pool *pgxpool.Pool, fn func(tx pgx.Tx)) {
	t.Helper()
	inTx(t, pool, "", "", fn)
}

// inTx runs fn in a transaction as role (the login role when "") with the
// claims (none when "").
func inTx(t *testing.T, pool *pgxpool.Pool, role, claims string, fn func(tx pgx.Tx)) {
	t.Helper()
	ctx := t.Context()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	// The claims first, as the login role: public.set_local, which the
	// service sets them with (SET LOCAL, which Citus passes on to its
	// workers), is the service's roles' to call.
	if claims != "" {
		if _, err := tx.Exec(ctx, `select public.set_local('request.jwt.claims', $1::text)`, claims); err != nil {
			t.Fatalf("set claims: %v", err)
		}
	}
	if role != "" {
		if _, err := tx.Exec(ctx, `select set_config('role', $1::text, true)`, role); err != nil {
			t.Fatalf("set role %s: %v", role, err)
		}
	}
	fn(tx)
	done = true
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// setArchiveTurns sets mentor.archive_turns for the rest of the
// transaction, as the store does.
func setArchiveTurns(t *testing.T, tx pgx.Tx, limit int) {
	t.Helper()
	apptest.Exec(t, tx, `select public.set_local('mentor.archive_turns', $1::text)`, fmt.Sprint(limit))
}

// tryExec runs a statement in a savepoint, so a failure leaves the
// transaction usable: the savepoint is released on success and rolled back
// on failure.
func tryExec(t *testing.T, tx pgx.Tx, sql string, args ...any) (int64, error) {
	t.Helper()
	var rows int64
	err := savepoint(t, tx, func(sp pgx.Tx) error {
		tag, err := sp.Exec(t.Context(), sql, args...)
		rows = tag.RowsAffected()
		return err
	})
	return rows, err
}

// tryExecRolledBack runs a statement in a savepoint that it always rolls
// back, and returns the rows the statement affected.
func tryExecRolledBack(t *testing.T, tx pgx.Tx, sql string, args ...any) (int64, error) {
	t.Helper()
	ctx := t.Context()
	sp, err := tx.Begin(ctx)
	if err != nil {
		t.Fatalf("savepoint: %v", err)
	}
	tag, err := sp.Exec(ctx, sql, args...)
	if rbErr := sp.Rollback(ctx); rbErr != nil {
		t.Fatalf("rollback to savepoint: %v", rbErr)
	}
	return tag.RowsAffected(), err
}

// tryScalar is apptest.Scalar in a savepoint, returning the error instead of
// failing.
func tryScalar[T any](t *testing.T, tx pgx.Tx, sql string, args ...any) (T, error) {
	t.Helper()
	var v T
	err := savepoint(t, tx, func(sp pgx.Tx) error {
		return sp.QueryRow(t.Context(), sql, args...).Scan(&v)
	})
	return v, err
}

func savepoint(t *testing.T, tx pgx.Tx, fn func(sp pgx.Tx) error) error {
	t.Helper()
	ctx := t.Context()
	sp, err := tx.Begin(ctx)
	if err != nil {
		t.Fatalf("savepoint: %v", err)
	}
	if err := fn(sp); err != nil {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			t.Fatalf("rollback to savepoint: %v (after %v)", rbErr, err)
		}
		return err
	}
	if err := sp.Commit(ctx); err != nil {
		t.Fatalf("release savepoint: %v", err)
	}
	return nil
}

// sqlState returns the SQLSTATE of a Postgres error, "" for nil and "?"
// for an error that did not come from Postgres.
func sqlState(err error) string {
	if err == nil {
		return ""
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return "?"
}

// wantState reports an error unless err is a Postgres error with the code.
func wantState(t *testing.T, err error, code, what string) {
	t.Helper()
	if got := sqlState(err); got != code {
		t.Errorf("%s: got error %v (SQLSTATE %q), want SQLSTATE %s", what, err, got, code)
	}
}

// createLearner adds a learner for the facilitator and returns its id.
func createLearner(t *testing.T, q apptest.DB, facilitatorID, name string) string {
	t.Helper()
	return apptest.Scalar[string](t, q, `insert into public.learners (facilitator_id, name)
		values ($1::uuid, $2::text) returning id::text`, facilitatorID, name)
}

// createConversation adds the active record of a conversation (learnerID
// nil for the general one) and returns its id.
func createConversation(t *testing.T, q apptest.DB, facilitatorID string, learnerID *string, summary string) string {
	t.Helper()
	return apptest.Scalar[string](t, q, `insert into public.conversation_updates (facilitator_id, learner_id, summary)
		values ($1::uuid, $2::uuid, nullif($3::text, '')) returning id::text`,
		facilitatorID, learnerID, summary)
}

// postTurns does what the store does when turns arrive: it appends them to
// the log in order, then adds their number to the conversation's
// turn_count in one update. It returns the turn_count after the update
// (the triggers may have archived some).
func postTurns(t *testing.T, q apptest.DB, facilitatorID string, learnerID *string, turns ...turn) int {
	t.Helper()
	insertTurns(t, q, facilitatorID, learnerID, turns...)
	contents := make([]string, len(turns))
	for i, tr := range turns {
		contents[i] = tr.Content
	}
	return apptest.Scalar[int](t, q, `update public.conversation_updates
		set turn_count = turn_count + $3::integer, updated_at = now(),
			turns_vector = turns_vector || to_tsvector('english', $4::text)
		where facilitator_id = $1::uuid and learner_id is not distinct from $2::uuid
		returning turn_count`, facilitatorID, learnerID, len(turns), strings.Join(contents, "\n"))
}

// insertTurns appends turns to the log of one conversation, in order, in
// one statement as the store does (with RETURNING, which Citus needs, see
// cmd/routecheck).
func insertTurns(t *testing.T, q apptest.DB, facilitatorID string, learnerID *string, turns ...turn) {
	t.Helper()
	roles := make([]string, len(turns))
	contents := make([]string, len(turns))
	for i, tr := range turns {
		roles[i], contents[i] = tr.Role, tr.Content
	}
	n := apptest.Exec(t, q, `insert into public.conversation_turns (facilitator_id, learner_id, role, content)
		select $1::uuid, $2::uuid, u.role, u.content
		from unnest($3::text[], $4::text[]) with ordinality as u(role, content, n)
		order by u.n
		returning id`, facilitatorID, learnerID, roles, contents)
	if n != int64(len(turns)) {
		t.Fatalf("inserted %d turns, want %d", n, len(turns))
	}
}

// numberedTurns returns n turns alternating user and assistant, with
// contents "turn 1", "turn 2", ...
func numberedTurns(n int) []turn {
	turns := make([]turn, n)
	for i := range turns {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		turns[i] = turn{Role: role, Content: fmt.Sprintf("turn %d", i+1)}
	}
	return turns
}

// logRow is one row of the turn log, with the archive it belongs to
// (archive_of, migration 0037, as the service reads it: ArchiveOf).
type logRow struct {
	turn
	archiveID *string
}

// turnLog returns the log of one conversation in order, read through q.
func turnLog(t *testing.T, q apptest.DB, facilitatorID string, learnerID *string) []logRow {
	t.Helper()
	rows, err := q.Query(t.Context(), `select t.role, t.content, (`+migrations.ArchiveOf("t")+`)::text
		from public.conversation_turns t
		where t.facilitator_id = $1::uuid and t.learner_id is not distinct from $2::uuid
		order by t.id`, facilitatorID, learnerID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (logRow, error) {
		var r logRow
		return r, row.Scan(&r.Role, &r.Content, &r.archiveID)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// archiveRow is one row of conversation_history_archive.
type archiveRow struct {
	id        string
	learnerID *string
	summary   *string
	turnCount int
	turns     []turn
}

// archives returns the archive rows of one conversation, oldest segment
// first (ordered by the first log turn that points at each).
func archives(t *testing.T, q apptest.DB, facilitatorID string, learnerID *string) []archiveRow {
	t.Helper()
	rows, err := q.Query(t.Context(), `select a.id::text, a.learner_id::text, a.summary, a.turn_count, a.conversation_turns
		from public.conversation_history_archive a
		where a.facilitator_id = $1::uuid and a.learner_id is not distinct from $2::uuid
		order by (select min(t.id) from public.conversation_turns t
			where t.facilitator_id = a.facilitator_id and `+migrations.ArchiveOf("t")+` = a.id), a.archived_at`,
		facilitatorID, learnerID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (archiveRow, error) {
		var a archiveRow
		return a, row.Scan(&a.id, &a.learnerID, &a.summary, &a.turnCount, &a.turns)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshot returns, as superuser, every row of table that belongs to the
// facilitator, as one canonical JSON text, to tell whether anything changed.
func snapshot(t *testing.T, pool *pgxpool.Pool, table, facilitatorID string) string {
	t.Helper()
	return apptest.Scalar[string](t, pool, `select coalesce(jsonb_agg(to_jsonb(x) order by to_jsonb(x)::text), '[]'::jsonb)::text
		from public.`+table+` x where x.facilitator_id = $1::uuid`, facilitatorID)
}

// countRows counts, through q, the rows of table that belong to the
// facilitator.
func countRows(t *testing.T, q apptest.DB, table, facilitatorID string) int64 {
	t.Helper()
	return apptest.Scalar[int64](t, q, `select count(*) from public.`+table+` where facilitator_id = $1::uuid`, facilitatorID)
}

// facilitator is a user with a row in every memory table.
type facilitator struct {
	id           string
	learner      string
	conversation string
	archive      string
}

// seedFacilitator creates a user and, as that user under RLS, a learner,
// the learner's conversation with two turns and a summary, a session, a
// memory, an opening and a job, and an archive row; the turns fill the
// vocabulary.
func seedFacilitator(t *testing.T, pool *pgxpool.Pool, learnerName string) facilitator {
	t.Helper()
	f := facilitator{id: apptest.NewUser(t, pool).ID}
	var erased string
	asService(t, pool, f.id, func(tx pgx.Tx) {
		f.learner = createLearner(t, tx, f.id, learnerName)
		f.conversation = createConversation(t, tx, f.id, &f.learner, "")
		postTurns(t, tx, f.id, &f.learner,
			turn{"user", "How is " + learnerName + " getting along with fractions?"},
			turn{"assistant", "Practising with pizza slices works well."})
		apptest.Exec(t, tx, `update public.conversation_updates set summary = $2::text
			where facilitator_id = $1::uuid and id = $3::uuid`,
			f.id, learnerName+" is learning fractions with pizza.", f.conversation)
		session := apptest.Scalar[string](t, tx, `insert into public.mentor_sessions (facilitator_id, learner_id, exchanges)
			values ($1::uuid, $2::uuid, 1) returning id::text`, f.id, f.learner)
		memory := apptest.Scalar[string](t, tx, `insert into public.learner_memories (facilitator_id, learner_id, type, content, importance, confidence, source, session_id)
			values ($1::uuid, $2::uuid, 'academic', $3, 0.5, 0.9, 'extracted', $4::uuid) returning id::text`,
			f.id, f.learner, learnerName+" finds fractions easier with pizza", session)
		apptest.Exec(t, tx, `insert into public.memory_history (facilitator_id, memory_id, learner_id, change, actor, content_after, confidence_after)
			values ($1::uuid, $2::uuid, $3::uuid, 'created', 'extraction', $4, 0.9)`,
			f.id, memory, f.learner, learnerName+" finds fractions easier with pizza")
		apptest.Exec(t, tx, `insert into public.session_openings (facilitator_id, learner_id, session_id, opening)
			values ($1::uuid, $2::uuid, $3::uuid, '{"welcome_hook": "Pizza fractions again?"}')`, f.id, f.learner, session)
		apptest.Exec(t, tx, `insert into public.memory_jobs (facilitator_id, learner_id, kind, dedupe_key)
			values ($1::uuid, $2::uuid, 'extract', 'turns:1-2')`, f.id, f.learner)
		apptest.Exec(t, tx, `insert into public.consolidation_runs (facilitator_id, learner_id, trigger)
			values ($1::uuid, $2::uuid, 'on_demand')`, f.id, f.learner)
		apptest.Exec(t, tx, `insert into public.learner_profiles (facilitator_id, learner_id, lines, tokens)
			values ($1::uuid, $2::uuid, '[{"category": "who", "text": "Likes pizza"}]', 8)`, f.id, f.learner)
		apptest.Exec(t, tx, `insert into public.pending_actions (facilitator_id, learner_id, kind, changes, expires_at)
			values ($1::uuid, $2::uuid, 'forget_memory', jsonb_build_array(jsonb_build_object('memory_id', $3::text)), now() + interval '10 minutes')`,
			f.id, f.learner, memory)
		apptest.Exec(t, tx, `select public.use_quota('turns/day', 2, null)`)
		apptest.Exec(t, tx, `insert into public.facilitator_settings (facilitator_id, retention_days) values ($1::uuid, 90)`, f.id)
		apptest.Exec(t, tx, `insert into public.learner_settings (facilitator_id, learner_id, learning)
			values ($1::uuid, $2::uuid, false)`, f.id, f.learner)
		erased = createLearner(t, tx, f.id, "Erased")
	})
	// A learner erased, which leaves its receipt; in a transaction of its
	// own, as the service erases: on Citus, erase, which runs as its
	// owner, may not change shards that the service's role changed earlier
	// in the transaction.
	asService(t, pool, f.id, func(tx pgx.Tx) {
		apptest.Exec(t, tx, `select public.erase('learner', $1::uuid)`, erased)
	})
	// Only the archiving triggers write the archive; the row stands for one
	// they wrote.
	f.archive = apptest.Scalar[string](t, pool, `insert into public.conversation_history_archive
		(facilitator_id, learner_id, summary, conversation_turns, turn_count)
		values ($1::uuid, $2::uuid, 'An earlier talk about reading.',
			'[{"role": "user", "content": "Reading before bed?"}]'::jsonb, 1)
		returning id::text`, f.id, f.learner)
	return f
}

func ptr[T any](v T) *T { return &v }

// deref is what p points at, or nil, for messages.
func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// equalPtr reports whether a and b are both nil or point at equal values.
func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// theOtherArchive is the one archived conversation of the facilitator's
// general conversation besides known, where there must be exactly two.
func theOtherArchive(t *testing.T, q apptest.DB, facilitatorID, known string) archiveRow {
	t.Helper()
	arcs := archives(t, q, facilitatorID, nil)
	if len(arcs) != 2 {
		t.Fatalf("%d archive rows, want %s and one archived", len(arcs), known)
	}
	if arcs[0].id == known {
		return arcs[1]
	}
	return arcs[0]
}
