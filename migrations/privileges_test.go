package migrations_test

import (
	"context"
	"testing"

	"mentormemory/app/apptest"

	"github.com/jackc/pgx/v5"
)

// No role a user can reach may truncate a table, add a trigger to one or
// reference one, on every table today and on a table created later; the
// privileges RLS governs stay as they were.
func TestUsersCannotTruncateTriggerOrReference(t *testing.T) {
	pool := newDatabase(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `create table public.added_later (id int)`); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `
		select c.relname, r.role, p.privilege
		from pg_class c
		join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
		cross join (values ('anon'), ('authenticated')) r(role)
		cross join (values ('TRUNCATE'), ('TRIGGER'), ('REFERENCES')) p(privilege)
		where c.relkind in ('r', 'p', 'v', 'm')
			and has_table_privilege(r.role, c.oid, p.privilege)`)
	if err != nil {
		t.Fatal(err)
	}
	held, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Table, Role, Privilege string }])
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range held {
		t.Errorf("%s holds %s on public.%s", h.Role, h.Privilege, h.Table)
	}

	var canSelect bool
	if err := pool.QueryRow(ctx, `select has_table_privilege('authenticated', 'public.learner_memories', 'SELECT')`).
		Scan(&canSelect); err != nil || !canSelect {
		t.Errorf("authenticated must keep reading its own learner_memories: %v %v", canSelect, err)
	}
	var tables int
	if err := pool.QueryRow(ctx, `select count(*) from pg_tables where schemaname = 'public'`).Scan(&tables); err != nil || tables < 8 {
		t.Fatalf("the check must see the schema's tables: %d %v", tables, err)
	}
}

// A user cannot revive an ended session, or rewrite when or why it ended;
// its closing state may still grow, as learnt memories arrive after the
// end.
func TestEndedSessionsStayEnded(t *testing.T) {
	pool := newDatabase(t)
	f := seedFacilitator(t, pool, "Ada")
	apptest.Exec(t, pool, `update public.mentor_sessions set ended_at = now(), end_reason = 'ended' where facilitator_id = $1::uuid`, f.id)
	asService(t, pool, f.id, func(tx pgx.Tx) {
		for _, update := range []string{
			`update public.mentor_sessions set ended_at = null, end_reason = null where facilitator_id = $1::uuid`,
			`update public.mentor_sessions set ended_at = now() - interval '1 day' where facilitator_id = $1::uuid`,
			`update public.mentor_sessions set end_reason = 'idle' where facilitator_id = $1::uuid`,
		} {
			_, err := tryExec(t, tx, update, f.id)
			wantState(t, err, "23514", update)
		}
		if n, err := tryExec(t, tx, `update public.mentor_sessions set closing = '{"new_memories": ["Ada likes maps"]}'
			where facilitator_id = $1::uuid`, f.id); err != nil || n != 1 {
			t.Fatalf("an ended session's closing state must stay writable: %d %v", n, err)
		}
	})
	if live := apptest.Count(t, pool, `select count(*) from public.mentor_sessions where ended_at is null`); live != 0 {
		t.Fatalf("%d sessions revived", live)
	}
}

// A signed-in user reaching the database through Supabase's Data API (role
// authenticated) reads their own rows and writes none, in any table: the
// service, acting as memory_service, is the only writer, so nothing skips
// its validation and limits.
func TestSignedInUsersReadOwnRowsAndWriteNone(t *testing.T) {
	pool := newDatabase(t)
	a := seedFacilitator(t, pool, "Maya")
	seedFacilitator(t, pool, "Noah")
	for _, table := range publicTables(t, pool) {
		owned := apptest.Scalar[bool](t, pool, `select exists (select 1 from pg_attribute
			where attrelid = ('public.' || $1)::regclass and attname = 'facilitator_id')`, table)
		column := "facilitator_id"
		if !owned {
			column = apptest.Scalar[string](t, pool, `select attname::text from pg_attribute
				where attrelid = ('public.' || $1)::regclass and attnum = 1`, table)
		}
		before := apptest.Scalar[int64](t, pool, `select count(*) from public.`+table)
		asSignedIn(t, pool, a.id, func(tx pgx.Tx) {
			n, err := tryScalar[int64](t, tx, `select count(*) from public.`+table)
			switch {
			case !owned:
				wantState(t, err, insufficientPrivilege, "a user reads "+table)
			case err != nil:
				t.Errorf("a user reads own %s: %v", table, err)
			case n != countRows(t, pool, table, a.id) || n == 0:
				t.Errorf("a user reads %d %s rows, want their own %d", n, table, countRows(t, pool, table, a.id))
			}
			for _, write := range []string{
				`insert into public.` + table + ` default values`,
				`update public.` + table + ` set ` + column + ` = ` + column,
				`delete from public.` + table,
			} {
				_, err := tryExec(t, tx, write)
				wantState(t, err, insufficientPrivilege, write)
			}
		})
		if after := apptest.Scalar[int64](t, pool, `select count(*) from public.`+table); after != before {
			t.Errorf("%s had %d rows, has %d after a user's writes", table, before, after)
		}
	}
}

// No role a user can reach may use or set a sequence: advanced to its end,
// one would refuse every facilitator's next turn or job.
func TestUsersCannotTouchSequences(t *testing.T) {
	pool := newDatabase(t)
	held := apptest.Column[string](t, pool, `select r.role || ' ' || p.privilege || ' ' || c.relname
		from pg_class c
		cross join (values ('anon'), ('authenticated')) r(role)
		cross join (values ('USAGE'), ('SELECT'), ('UPDATE')) p(privilege)
		where c.relnamespace = 'public'::regnamespace and c.relkind = 'S'
			and has_sequence_privilege(r.role, c.oid, p.privilege)`)
	for _, h := range held {
		t.Errorf("held: %s", h)
	}
	if n := apptest.Count(t, pool, `select count(*) from pg_class where relnamespace = 'public'::regnamespace and relkind = 'S'`); n < 2 {
		t.Fatalf("the check must see the sequences: %d", n)
	}
}
