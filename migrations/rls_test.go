package migrations_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
	"mentormemory/migrations"
)

// TestRLSIsolatesFacilitators checks, table by table, that facilitator B,
// running as the service runs B's requests, can neither see, create,
// change nor delete facilitator A's rows.
func TestRLSIsolatesFacilitators(t *testing.T) {
	pool := newDatabase(t)
	a := seedFacilitator(t, pool, "Maya")
	b := seedFacilitator(t, pool, "Noah")

	t.Run("auth.uid is the caller", func(t *testing.T) {
		asService(t, pool, b.id, func(tx pgx.Tx) {
			var uid, role, user string
			if err := tx.QueryRow(t.Context(),
				`select auth.uid()::text, auth.role(), current_user::text`).Scan(&uid, &role, &user); err != nil {
				t.Fatal(err)
			}
			if uid != b.id || role != "authenticated" || user != "memory_service" {
				t.Errorf("auth.uid(), auth.role(), current_user = %s, %s, %s; want %s, authenticated, memory_service",
					uid, role, user, b.id)
			}
		})
	})

	// Each statement takes the facilitator whose rows it targets as $1.
	// Update and delete are granted on some tables and refused by RLS
	// (0 rows), and revoked from callers on the append-only and read-only
	// ones (permission denied).
	cases := []struct {
		table        string
		insert       string // a row for the facilitator $1 (and the learner $2, withLearner)
		withLearner  bool   // insert names a learner of the facilitator's
		ownInsert    bool   // B may run insert for itself
		set          string // what the updates change
		updateDenied bool   // update revoked from callers
		deleteDenied bool   // delete revoked from callers
	}{
		{table: "learners", ownInsert: true, set: "name = 'Hijacked'",
			insert: `insert into public.learners (facilitator_id, name) values ($1::uuid, 'Intruder')`},
		{table: "conversation_updates", ownInsert: true, set: "summary = 'Hijacked', turn_count = 0",
			insert: `insert into public.conversation_updates (facilitator_id, learner_id, summary) values ($1::uuid, null, 'Intruder')`},
		{table: "conversation_turns", ownInsert: true, set: "content = 'Hijacked'", updateDenied: true, deleteDenied: true,
			insert: `insert into public.conversation_turns (facilitator_id, role, content) values ($1::uuid, 'user', 'Intruder')`},
		{table: "conversation_history_archive", set: "summary = 'Hijacked'", updateDenied: true, deleteDenied: true,
			insert: `insert into public.conversation_history_archive (facilitator_id, summary, turn_count) values ($1::uuid, 'Intruder', 0)`},
		{table: "search_vocabulary", set: "word = 'hijacked'", updateDenied: true, deleteDenied: true,
			insert: `insert into public.search_vocabulary (facilitator_id, word) values ($1::uuid, 'intruder')`},
		{table: "learner_memories", ownInsert: true, set: "content = 'Hijacked'",
			insert: `insert into public.learner_memories (facilitator_id, type, content, importance, confidence, source) values ($1::uuid, 'personal', 'Intruder', 1, 1, 'added')`},
		{table: "memory_history", ownInsert: true, set: "change = 'forgotten'", updateDenied: true, deleteDenied: true,
			insert: `insert into public.memory_history (facilitator_id, memory_id, change, actor) values ($1::uuid, gen_random_uuid(), 'created', 'facilitator')`},
		{table: "consolidation_runs", ownInsert: true, set: "status = 'failed'", deleteDenied: true, withLearner: true,
			insert: `insert into public.consolidation_runs (facilitator_id, learner_id, trigger, status)
				values ($1::uuid, $2::uuid, 'on_demand', 'done')`},
		{table: "learner_profiles", set: "tokens = 0", deleteDenied: true, withLearner: true,
			insert: `insert into public.learner_profiles (facilitator_id, learner_id) values ($1::uuid, $2::uuid)`},
		{table: "pending_actions", ownInsert: true, set: "status = 'cancelled', decided_at = now()", deleteDenied: true,
			insert: `insert into public.pending_actions (facilitator_id, kind, changes, expires_at) values ($1::uuid, 'forget_memory', '[{}]', now() + interval '1 minute')`},
		{table: "mentor_sessions", ownInsert: true, set: "last_message = 'Hijacked'", deleteDenied: true,
			insert: `insert into public.mentor_sessions (facilitator_id) values ($1::uuid)`},
		// Clearing a conversation deletes its opening (migration 0025).
		{table: "session_openings", set: "opening = '{}'",
			insert: `insert into public.session_openings (facilitator_id, session_id, opening) values ($1::uuid, gen_random_uuid(), '{}')`},
		{table: "facilitator_settings", set: "learning = false, retention_days = 1", deleteDenied: true,
			insert: `insert into public.facilitator_settings (facilitator_id, learning) values ($1::uuid, false)`},
		{table: "learner_settings", set: "learning = true", deleteDenied: true, withLearner: true,
			insert: `insert into public.learner_settings (facilitator_id, learner_id, learning) values ($1::uuid, $2::uuid, false)`},
		{table: "memory_jobs", ownInsert: true, set: "payload = '{}'", updateDenied: true, deleteDenied: true,
			insert: `insert into public.memory_jobs (facilitator_id, kind, dedupe_key) values ($1::uuid, 'extract', 'intruder')`},
		{table: "usage_counters", set: "used = 0", updateDenied: true, deleteDenied: true,
			insert: `insert into public.usage_counters (facilitator_id, counter, window_ends_at, used) values ($1::uuid, 'read/minute', now(), 0)`},
	}
	for _, tc := range cases {
		t.Run(tc.table, func(t *testing.T) {
			before := snapshot(t, pool, tc.table, a.id)
			if before == "[]" {
				t.Fatalf("fixture: A has no %s rows", tc.table)
			}
			asService(t, pool, b.id, func(tx pgx.Tx) {
				if n := countRows(t, tx, tc.table, a.id); n != 0 {
					t.Errorf("B selects %d of A's rows, want 0", n)
				}
				if n := apptest.Scalar[int64](t, tx, `select count(*) from public.`+tc.table+
					` where facilitator_id is distinct from $1::uuid`, b.id); n != 0 {
					t.Errorf("B selects %d rows that are not B's, want 0", n)
				}
				if n := countRows(t, tx, tc.table, b.id); n == 0 {
					t.Errorf("B selects none of its own rows")
				}

				// A learner of the facilitator's when the caller may see
				// one (Citus takes no sub-select in an INSERT's VALUES).
				insertFor := func(facilitator string) error {
					args := []any{facilitator}
					if tc.withLearner {
						args = append(args, apptest.Scalar[string](t, tx, `select coalesce(
							(select id from public.learners where facilitator_id = $1::uuid limit 1), gen_random_uuid())::text`,
							facilitator))
					}
					_, err := tryExec(t, tx, tc.insert, args...)
					return err
				}
				err := insertFor(a.id)
				wantState(t, err, insufficientPrivilege, "B inserts a row for A")
				if tc.ownInsert {
					// The same statement for B itself passes, so the
					// refusal above was about whose row it is.
					if err := insertFor(b.id); err != nil {
						t.Errorf("B inserts the same row for itself: %v", err)
					}
				}

				update := `update public.` + tc.table + ` set ` + tc.set
				del := `delete from public.` + tc.table
				const ofA = ` where facilitator_id = $1::uuid`
				for _, stmt := range []struct {
					what, sql string
					denied    bool
				}{
					{"update", update + ofA, tc.updateDenied}, {"delete", del + ofA, tc.deleteDenied},
				} {
					n, err := tryExec(t, tx, stmt.sql, a.id)
					if stmt.denied {
						wantState(t, err, insufficientPrivilege, "B's "+stmt.what+" of A's rows")
					} else if err != nil || n != 0 {
						t.Errorf("B's %s of A's rows: %d rows, error %v; want 0 rows, no error", stmt.what, n, err)
					}
				}

				// Without a WHERE clause the SELECT policy does not
				// apply, only the UPDATE or DELETE policy: the statement
				// must touch exactly B's own rows. Rolled back, to keep
				// B's rows for the next statement.
				own := countRows(t, tx, tc.table, b.id)
				for _, stmt := range []struct {
					what, sql string
					denied    bool
				}{
					{"unfiltered update", update, tc.updateDenied},
					{"unfiltered delete", del, tc.deleteDenied},
				} {
					n, err := tryExecRolledBack(t, tx, stmt.sql)
					if stmt.denied {
						wantState(t, err, insufficientPrivilege, "B's "+stmt.what)
					} else if err != nil || n != own {
						t.Errorf("B's %s: %d rows, error %v; want B's own %d rows", stmt.what, n, err, own)
					}
				}
			})
			if after := snapshot(t, pool, tc.table, a.id); after != before {
				t.Errorf("A's %s changed:\nbefore %s\nafter  %s", tc.table, before, after)
			}
		})
	}

	t.Run("auth.users", func(t *testing.T) {
		asService(t, pool, b.id, func(tx pgx.Tx) {
			n, err := tryScalar[int64](t, tx, `select count(*) from auth.users where id = $1::uuid`, a.id)
			if err == nil && n != 0 || err != nil && sqlState(err) != insufficientPrivilege {
				t.Errorf("B selects A from auth.users: %d rows, error %v", n, err)
			}
		})
	})

	// The composite foreign keys keep B from hanging its own rows on A's
	// learner.
	t.Run("attach to A's learner", func(t *testing.T) {
		for _, tc := range []struct{ table, insert string }{
			{"conversation_updates", `insert into public.conversation_updates (facilitator_id, learner_id) values ($1::uuid, $2::uuid)`},
			{"conversation_turns", `insert into public.conversation_turns (facilitator_id, learner_id, role, content) values ($1::uuid, $2::uuid, 'user', 'Intruder')`},
		} {
			asService(t, pool, b.id, func(tx pgx.Tx) {
				_, err := tryExec(t, tx, tc.insert, b.id, a.learner)
				wantState(t, err, foreignKeyViolation, "B's "+tc.table+" row on A's learner")
			})
		}
	})

	// archive_oldest_turns runs as its owner and takes the facilitator as
	// an argument: callable by B it would let B archive A's turns.
	t.Run("helper functions not callable", func(t *testing.T) {
		asService(t, pool, b.id, func(tx pgx.Tx) {
			_, err := tryExec(t, tx, `select public.archive_oldest_turns($1::uuid, $2::uuid, 'Hijacked', 100, 1000000)`, a.id, a.learner)
			wantState(t, err, insufficientPrivilege, "B calls archive_oldest_turns for A")
		})
		asAnon(t, pool, "", func(tx pgx.Tx) {
			_, err := tryExec(t, tx, `select public.archive_oldest_turns($1::uuid, $2::uuid, 'Hijacked', 100, 1000000)`, a.id, a.learner)
			wantState(t, err, insufficientPrivilege, "anon calls archive_oldest_turns for A")
		})
		if n := apptest.Scalar[int64](t, pool, `select count(*) from public.conversation_turns t
			where t.facilitator_id = $1::uuid and `+migrations.ArchiveOf("t")+` is not null`, a.id); n != 0 {
			t.Errorf("%d of A's turns were archived by the calls", n)
		}
		if n := apptest.Scalar[int64](t, pool, `select count(*) from public.conversation_history_archive
			where facilitator_id = $1::uuid and summary = 'Hijacked'`, a.id); n != 0 {
			t.Errorf("the calls created %d archive rows for A", n)
		}
	})
}

// TestAppendOnlyForOwner checks that the turn log and the archive are
// append-only even for their owner: A reads and adds turns, never changes
// or removes them; archive rows come from the archiving triggers, or from
// an import of the caller's own archived conversations (migration 0027).
func TestAppendOnlyForOwner(t *testing.T) {
	pool := newDatabase(t)
	a := seedFacilitator(t, pool, "Maya")

	cases := []struct {
		table        string
		insert       string // $1 facilitator, $2 learner
		insertDenied bool
		update       string // $1 facilitator
	}{
		{
			table: "conversation_turns",
			insert: `insert into public.conversation_turns (facilitator_id, learner_id, role, content)
				values ($1::uuid, $2::uuid, 'user', 'One more question')`,
			update: `update public.conversation_turns set content = 'Rewritten' where facilitator_id = $1::uuid`,
		},
		{
			table: "conversation_history_archive",
			insert: `insert into public.conversation_history_archive
				(facilitator_id, learner_id, summary, conversation_turns, turn_count)
				values ($1::uuid, $2::uuid, 'Another segment', '[{"role": "user", "content": "Hi"}]'::jsonb, 1)`,
			update: `update public.conversation_history_archive set summary = 'Rewritten' where facilitator_id = $1::uuid`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.table, func(t *testing.T) {
			before := snapshot(t, pool, tc.table, a.id)
			var seen int64
			asService(t, pool, a.id, func(tx pgx.Tx) {
				seen = countRows(t, tx, tc.table, a.id)
				if want := apptest.Scalar[int64](t, pool, `select count(*) from public.`+tc.table+
					` where facilitator_id = $1::uuid`, a.id); seen != want || seen == 0 {
					t.Errorf("A selects %d own rows, want all %d", seen, want)
				}
				_, err := tryExec(t, tx, tc.insert, a.id, a.learner)
				if tc.insertDenied {
					wantState(t, err, insufficientPrivilege, "A inserts an own "+tc.table+" row")
				} else if err != nil {
					t.Errorf("A inserts an own row: %v", err)
				}
				for _, stmt := range []struct{ what, sql string }{
					{"update", tc.update},
					{"delete", `delete from public.` + tc.table + ` where facilitator_id = $1::uuid`},
				} {
					_, err := tryExec(t, tx, stmt.sql, a.id)
					wantState(t, err, insufficientPrivilege, "A's "+stmt.what+" of own "+tc.table)
				}
				_, err = tryExec(t, tx, `truncate public.`+tc.table)
				wantState(t, err, insufficientPrivilege, "A truncates "+tc.table)
			})
			// Everything that was there is still there, plus the insert.
			want := seen + 1
			if tc.insertDenied {
				want = seen
			}
			after := apptest.Scalar[int64](t, pool, `select count(*) from public.`+tc.table+
				` where facilitator_id = $1::uuid`, a.id)
			if after != want {
				t.Errorf("A has %d %s rows after, want %d", after, tc.table, want)
			}
			changed := apptest.Scalar[int64](t, pool, `select count(*) from jsonb_array_elements($1::jsonb) e
				where not exists (select 1 from public.`+tc.table+` x
					where x.facilitator_id = $2::uuid and to_jsonb(x) = e.value)`, before, a.id)
			if changed != 0 {
				t.Errorf("%d of A's earlier %s rows changed or went", changed, tc.table)
			}
		})
	}

	// Only the archiving triggers move a turn into the archive.
	t.Run("turn inserted as archived", func(t *testing.T) {
		asService(t, pool, a.id, func(tx pgx.Tx) {
			_, err := tryExec(t, tx, `insert into public.conversation_turns
				(facilitator_id, learner_id, archive_id, role, content)
				values ($1::uuid, $2::uuid, $3::uuid, 'user', 'Sneaked in')`, a.id, a.learner, a.archive)
			wantState(t, err, insufficientPrivilege, "A inserts a turn with archive_id set")
		})
	})
}

// TestAnonSeesNothing checks that the anon role reads no row of any table
// in public, with no claims and even with a facilitator's claims (the
// policies are for authenticated only).
func TestAnonSeesNothing(t *testing.T) {
	pool := newDatabase(t)
	a := seedFacilitator(t, pool, "Maya")
	tables := publicTables(t, pool)
	for _, table := range tables {
		if n := apptest.Scalar[int64](t, pool, `select count(*) from public.`+table); n == 0 {
			t.Fatalf("fixture: %s is empty", table)
		}
	}

	for _, tc := range []struct{ name, claims string }{
		{"no claims", ""},
		{"facilitator's claims", string(apptest.Claims(a.id))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asAnon(t, pool, tc.claims, func(tx pgx.Tx) {
				if user := apptest.Scalar[string](t, tx, `select current_user::text`); user != "anon" {
					t.Fatalf("current_user = %s, want anon", user)
				}
				for _, table := range tables {
					n, err := tryScalar[int64](t, tx, `select count(*) from public.`+table)
					switch {
					case sqlState(err) == insufficientPrivilege:
						// Not even allowed to look.
					case err != nil:
						t.Errorf("anon selects %s: %v", table, err)
					case n != 0:
						t.Errorf("anon sees %d rows of %s, want 0", n, table)
					}
				}
				// auth.users holds every user's email.
				n, err := tryScalar[int64](t, tx, `select count(*) from auth.users`)
				if err == nil && n != 0 || err != nil && sqlState(err) != insufficientPrivilege {
					t.Errorf("anon selects auth.users: %d rows, error %v", n, err)
				}
				_, err = tryExec(t, tx, `insert into public.learners (facilitator_id, name) values ($1::uuid, 'Intruder')`, a.id)
				wantState(t, err, insufficientPrivilege, "anon inserts a learner")
				n, err = tryExec(t, tx, `delete from public.learners`)
				if err != nil && sqlState(err) != insufficientPrivilege || n != 0 {
					t.Errorf("anon deletes learners: %d rows, error %v", n, err)
				}
			})
		})
	}
	if n := countRows(t, pool, "learners", a.id); n != 1 {
		t.Errorf("A has %d learners after anon's attempts, want 1", n)
	}
}

// TestSecurityDefinerFunctionsPinSearchPath checks that no function running
// as its owner resolves names through the caller's search_path.
func TestSecurityDefinerFunctionsPinSearchPath(t *testing.T) {
	pool := newDatabase(t)
	rows, err := pool.Query(t.Context(), `select
			n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')',
			coalesce(p.proconfig, '{}'::text[])
		from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		where p.prosecdef and n.nspname in ('public', 'auth')
		order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	type fn struct {
		name   string
		config []string
	}
	fns, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (fn, error) {
		var f fn
		return f, row.Scan(&f.name, &f.config)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) == 0 {
		t.Fatal("no SECURITY DEFINER function in public or auth: the query finds nothing to check")
	}
	for _, f := range fns {
		pinned := slices.ContainsFunc(f.config, func(s string) bool {
			return strings.HasPrefix(s, "search_path=")
		})
		if !pinned {
			t.Errorf("SECURITY DEFINER %s has no fixed search_path (proconfig %v)", f.name, f.config)
		}
	}
	t.Logf("%d SECURITY DEFINER functions checked", len(fns))
}

// TestRLSEnabledOnEveryPublicTable checks relrowsecurity on every table in
// public, the migrations' bookkeeping table included.
func TestRLSEnabledOnEveryPublicTable(t *testing.T) {
	pool := newDatabase(t)
	rows, err := pool.Query(t.Context(), `select c.relname::text, c.relrowsecurity
		from pg_class c
		where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p')
		order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var name string
	var rls bool
	if _, err := pgx.ForEachRow(rows, []any{&name, &rls}, func() error {
		names = append(names, name)
		if !rls {
			t.Errorf("row-level security is not enabled on public.%s", name)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]string{"memory_migrations"}, memoryTables...) {
		if !slices.Contains(names, want) {
			t.Errorf("public.%s not found among %v", want, names)
		}
	}
}

// publicTables lists the tables in schema public.
func publicTables(t *testing.T, pool apptest.DB) []string {
	t.Helper()
	names := apptest.Column[string](t, pool, `select c.relname::text from pg_class c
		where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') order by 1`)
	if len(names) < len(memoryTables)+1 {
		t.Fatalf("public has tables %v, want at least the memory tables and memory_migrations", names)
	}
	return names
}
