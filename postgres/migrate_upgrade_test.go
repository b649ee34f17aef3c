package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// upgradedFrom is the migration a database is left at before the later
// ones run on it as an upgrade: the release before the archive's words
// came from its stored turns (0063) and the migrations of the months
// before it.
const upgradedFrom = "0056_range_linked_archives_per_facilitator"

// upgradeRows are what a service of that release wrote: a facilitator, a
// learner, turns, and a segment archived by range.
var upgradeRows = []string{
	`insert into auth.users (id, email) values ('33333333-3333-3333-3333-333333333333', 'upgrade@example.com')`,
	`insert into public.learners (facilitator_id, id, name)
		values ('33333333-3333-3333-3333-333333333333', '44444444-4444-4444-4444-444444444444', 'Maya')`,
	`insert into public.conversation_turns (facilitator_id, learner_id, role, content) values
		('33333333-3333-3333-3333-333333333333', '44444444-4444-4444-4444-444444444444', 'user', 'Maya counted penguins at the zoo.'),
		('33333333-3333-3333-3333-333333333333', '44444444-4444-4444-4444-444444444444', 'assistant', 'Counting animals is good practice.')`,
	`select public.archive_oldest_turns('33333333-3333-3333-3333-333333333333', '44444444-4444-4444-4444-444444444444',
		'Penguins.', 50, 200000)`,
}

// schemaSQL lists what a migration defines, one line each, sorted: the
// columns (with their generation), indexes, triggers, functions (by their
// body's digest) and policies of the service's schemas, and, on Citus,
// each distributed table's triggers and generated columns as every shard
// has them, and the generated columns of the workers' copies of the
// tables' definitions: the places Citus may leave out of a change.
func schemaSQL(onCitus bool) string {
	const ours = `('public', 'private', 'auth')`
	parts := []string{
		`select format('column %s.%s %s %s %s', table_schema, table_name, column_name, data_type,
			coalesce(generation_expression, '')) from information_schema.columns where table_schema in ` + ours,
		`select format('index %s', indexdef) from pg_indexes where schemaname in ` + ours,
		`select format('trigger %s %s %s', t.tgrelid::regclass, t.tgname, t.tgenabled) from pg_trigger t
			join pg_class c on c.oid = t.tgrelid where not t.tgisinternal and c.relnamespace::regnamespace::text in ` + ours,
		`select format('function %s %s', p.oid::regprocedure, md5(p.prosrc)) from pg_proc p
			where p.pronamespace::regnamespace::text in ` + ours,
		`select format('policy %s.%s %s %s %s %s', schemaname, tablename, policyname, cmd, qual, with_check)
			from pg_policies where schemaname in ` + ours,
	}
	if onCitus {
		parts = append(parts,
			`select distinct format('shard of %s: %s', p.logicalrelid, r.result) from pg_dist_partition p
			cross join run_command_on_shards(p.logicalrelid, $$select concat(
				(select string_agg(regexp_replace(tgname, '_[0-9]+$', ''), ',' order by tgname) from pg_trigger
					where tgrelid = '%1$s'::regclass and not tgisinternal), ' generated ',
				(select string_agg(attname, ',' order by attname) from pg_attribute
					where attrelid = '%1$s'::regclass and attgenerated <> ''))$$) r`,
			`select distinct format('worker copies generate: %s', r.result) from run_command_on_workers($$
				select string_agg(a.attrelid::regclass || '.' || a.attname, ',' order by 1) from pg_attribute a
				join pg_class c on c.oid = a.attrelid
				where a.attgenerated <> '' and c.relnamespace::regnamespace::text in ('public', 'private')
					and c.relname !~ '_[0-9]+$'$$) r`)
	}
	return `select coalesce(string_agg(line, E'\n' order by line), '') from (` +
		strings.Join(parts, "\nunion all\n") + `) s(line)`
}

// A database migrated by an earlier release, written to, then migrated
// the rest of the way as an upgrade does (on Citus distributed first, as
// `server migrate --citus` left it, so each later migration meets
// distributed tables) has the schema of a database migrated at once: every
// column, index, trigger, function and policy, and on Citus every shard's
// triggers and generated columns and the workers' copies. A migration that
// works on an empty database but not on a used or distributed one fails
// here (migration 0063's first version left its trigger off the shards).
func TestAnUpgradedDatabaseHasTheSchemaOfAFreshOne(t *testing.T) {
	upgraded := pgtest.NewDatabaseBuiltBy(t, func(ctx context.Context, dbURL string) error {
		if err := withPool(ctx, dbURL, func(pool *pgxpool.Pool) error {
			if err := postgres.MigrateThrough(ctx, pool, upgradedFrom); err != nil {
				return err
			}
			if pgtest.OnCitus() {
				if _, err := postgres.Distribute(ctx, pool); err != nil {
					return err
				}
			}
			for _, statement := range upgradeRows {
				if _, err := pool.Exec(ctx, statement); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		// The upgrade is a later process: its connections see the settings
		// distributing gave the database.
		return withPool(ctx, dbURL, func(pool *pgxpool.Pool) error {
			_, err := postgres.Migrate(ctx, pool)
			return err
		})
	})
	fresh := pgtest.NewDatabase(t)

	schema := func(dbURL string) []string {
		t.Helper()
		var lines string
		if err := withPool(context.Background(), dbURL, func(pool *pgxpool.Pool) error {
			return pool.QueryRow(context.Background(), schemaSQL(pgtest.OnCitus())).Scan(&lines)
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Split(lines, "\n")
	}
	want, got := schema(fresh), schema(upgraded)
	if len(want) < 100 {
		t.Fatalf("the fresh database's schema has %d lines; the comparison reads nothing", len(want))
	}
	for _, line := range difference(want, got) {
		t.Errorf("upgraded database lacks: %s", line)
	}
	for _, line := range difference(got, want) {
		t.Errorf("upgraded database has, a fresh one not: %s", line)
	}
}

// withPool runs fn with a pool of its own on the database at dbURL.
func withPool(ctx context.Context, dbURL string, fn func(*pgxpool.Pool) error) error {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	return fn(pool)
}

// difference is the lines of a that b lacks.
func difference(a, b []string) []string {
	in := map[string]bool{}
	for _, line := range b {
		in[line] = true
	}
	var out []string
	for _, line := range a {
		if !in[line] {
			out = append(out, line)
		}
	}
	return out
}
