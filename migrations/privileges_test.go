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
	if err := pool.QueryRow(ctx, `select has_table_privilege('authenticated', 'public.learner_memories', 'SELECT, INSERT, UPDATE, DELETE')`).
		Scan(&canSelect); err != nil || !canSelect {
		t.Errorf("authenticated must keep what RLS governs on learner_memories: %v %v", canSelect, err)
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
	asUser(t, pool, f.id, func(tx pgx.Tx) {
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
