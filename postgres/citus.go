package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Citus (distributed Postgres) serves the memory from worker nodes: every
// table kept per facilitator is split into shards by facilitator_id, all
// of them alike (colocated), so a facilitator's rows of every table are on
// one node and each of the service's statements, which all name one
// facilitator, runs on that node alone. auth.users becomes a reference
// table, a copy on every node, which the tables' foreign keys reference
// there.
//
// Distribute makes a migrated database on a Citus coordinator so. It is
// `server migrate --citus`; README "Running on Citus" says how to set up
// the coordinator and its workers.

// ErrNoCitus is CheckCitusCoordinator's answer on a database without the
// citus extension.
var ErrNoCitus = errors.New("the citus extension is not installed in this database: " +
	"on the coordinator and on every worker run `create extension citus`, then add the workers " +
	"on the coordinator with `select citus_add_node('<host>', <port>)`")

// citusRoles are the roles the service's statements run as. Citus reaches
// the workers as the role a statement runs as on the coordinator, so each
// must be able to log in there (the Data API's signed-in users run as
// authenticated).
var citusRoles = []string{"authenticated", "memory_service", "memory_worker"}

// Distribute distributes, in one transaction, every table of public and
// private with a facilitator_id that is not distributed yet, colocated with
// public.learners (but for apartTables), and makes auth.users a reference
// table; creates on the workers the functions Citus has not created there;
// lets the service's roles log in; and sets citusDatabaseSettings for the
// database. Run again, it distributes only what a migration added since,
// and changes nothing when there is nothing to do. It returns what it did,
// a line each.
func Distribute(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	if err := CheckCitusCoordinator(ctx, pool); err != nil {
		return nil, err
	}
	var done []string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Each table with triggers needs Citus's opt-in (migration 0012's,
		// 0015's, 0029's and the conversation's own); every trigger here
		// touches only the rows of its own facilitator.
		if _, err := tx.Exec(ctx, `set local citus.enable_unsafe_triggers = on`); err != nil {
			return err
		}
		// Creating shards after a reference table was written to in the
		// transaction must go over one connection per node.
		if _, err := tx.Exec(ctx, `set local citus.multi_shard_modify_mode = 'sequential'`); err != nil {
			return err
		}
		var err error
		if done, err = distributeTables(ctx, tx); err != nil {
			return err
		}
		functions, err := distributeFunctions(ctx, tx)
		if err != nil {
			return err
		}
		done = append(done, functions...)
		for _, role := range citusRoles {
			var canLogin bool
			if err := tx.QueryRow(ctx, `select rolcanlogin from pg_roles where rolname = $1`, role).Scan(&canLogin); err != nil {
				return fmt.Errorf("role %s: %w", role, err)
			}
			if !canLogin {
				if _, err := tx.Exec(ctx, `alter role `+pgx.Identifier{role}.Sanitize()+` login`); err != nil {
					return err
				}
				done = append(done, "role "+role+" may log in (Citus reaches the workers as it)")
			}
		}
		for _, setting := range citusDatabaseSettings {
			var set bool
			if err := tx.QueryRow(ctx, `select exists (select 1 from pg_db_role_setting s
				join pg_database d on d.oid = s.setdatabase and d.datname = current_database()
				where s.setrole = 0 and $1 = any(s.setconfig))`, setting.name+"="+setting.value).Scan(&set); err != nil {
				return err
			}
			if set {
				continue
			}
			var database string
			if err := tx.QueryRow(ctx, `select current_database()`).Scan(&database); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `alter database `+pgx.Identifier{database}.Sanitize()+
				` set `+setting.name+` = '`+setting.value+`'`); err != nil {
				return err
			}
			done = append(done, fmt.Sprintf("the database sets %s = '%s' (for connections opened from now on): %s",
				setting.name, setting.value, setting.why))
		}
		return nil
	})
	return done, err
}

// MigrateOnCitus is Migrate saying what distributing did, for `server
// migrate --citus`. Once the tables are distributed, each migration it
// applies is followed by Distribute: a table a migration adds is
// distributed before the next migration runs, which may then give it a
// foreign key to another distributed table (Citus refuses one from a table
// not distributed yet). On a database not distributed it applies the
// migrations alone. It returns the migrations applied and what
// distributing them did.
func MigrateOnCitus(ctx context.Context, pool *pgxpool.Pool) (applied, distributed []string, err error) {
	return migrateOnCitus(ctx, pool, "")
}

// migrateOnCitus is MigrateOnCitus, stopping after the migration through
// when it is set (see migrate).
func migrateOnCitus(ctx context.Context, pool *pgxpool.Pool, through string) (applied, distributed []string, err error) {
	alreadyDistributed, err := isDistributed(ctx, pool)
	if err != nil {
		return nil, nil, err
	}
	var after func(string) error
	if alreadyDistributed {
		after = func(string) error {
			done, err := Distribute(ctx, pool)
			distributed = append(distributed, done...)
			return err
		}
	}
	applied, err = migrate(ctx, pool, through, after)
	return applied, distributed, err
}

// isDistributed says whether the database's tables are distributed on
// Citus (by Distribute), false on plain Postgres.
func isDistributed(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	var hasCitus bool
	if err := pool.QueryRow(ctx, `select to_regclass('pg_catalog.pg_dist_partition') is not null`).Scan(&hasCitus); err != nil || !hasCitus {
		return false, err
	}
	var distributed bool
	err := pool.QueryRow(ctx, `select exists (select 1 from pg_catalog.pg_dist_partition
		where logicalrelid = to_regclass($1) and partmethod = 'h')`, colocationSource).Scan(&distributed)
	return distributed, err
}

// CheckCitusCoordinator fails, saying what to do, unless the database is
// on a Citus coordinator with a worker to hold the shards.
func CheckCitusCoordinator(ctx context.Context, pool *pgxpool.Pool) error {
	var hasCitus bool
	if err := pool.QueryRow(ctx, `select exists (select 1 from pg_extension where extname = 'citus')`).Scan(&hasCitus); err != nil {
		return err
	}
	if !hasCitus {
		return ErrNoCitus
	}
	// The service writes through the coordinator only: the identity
	// sequences of the turn log, the jobs and the memories' history hand
	// out their ids in order there, while a worker's start at its group
	// number times 2^48, which would sort every turn written through it
	// after all the others.
	var group int
	if err := pool.QueryRow(ctx, `select groupid from pg_dist_local_group`).Scan(&group); err != nil {
		return err
	}
	if group != 0 {
		return errors.New("this is a Citus worker node: DATABASE_URL must name the coordinator, " +
			"for `server migrate --citus` and for the service")
	}
	var workers int
	if err := pool.QueryRow(ctx, `select count(*) from pg_dist_node
		where noderole = 'primary' and isactive and shouldhaveshards`).Scan(&workers); err != nil {
		return err
	}
	if workers == 0 {
		return errors.New("this Citus coordinator has no worker to hold the shards: " +
			"add one with `select citus_add_node('<host>', <port>)`")
	}
	return nil
}

// citusDatabaseSettings are set for the database, so that every session
// has them.
var citusDatabaseSettings = []struct{ name, value, why string }{
	{"citus.propagate_set_commands", "local",
		"Citus passes each request's SET LOCAL settings on to the workers, where the policies read them"},
	{"citus.enable_unsafe_triggers", "on",
		"a later migration may create or replace a trigger of a distributed table (each trigger here changes its own facilitator's rows only)"},
}

// colocationSource is the table every other is colocated with, but for
// those of apartTables.
const colocationSource = "public.learners"

// apartTables are distributed by facilitator_id in a colocation group of
// their own. Within a transaction Citus refuses to touch a facilitator's
// shards as one role once another role changed one of them (it reaches the
// workers as each role over a connection of its own, and neither would see
// the other's changes). The usage counters are changed by use_quota, which
// runs as its owner (migration 0017), at the start of a request whose
// other statements run as memory_service: apart from the facilitator's
// other shards, they are no longer one of them. Nothing else reads or
// writes them, and their only foreign key is to auth.users, a reference
// table, which a table of any colocation group may reference.
var apartTables = []string{"public.usage_counters"}

// distributeTables distributes the tables kept per facilitator that are
// not distributed yet (those of public, and the lists of private the
// triggers keep, such as migration 0031's archived conversations to count), and makes auth.users a reference table if it is not
// one. Citus checks a foreign key as it is created, and refuses one from a
// distributed table to a table that is neither distributed alike nor a
// reference table, so every foreign key that involves a table about to
// change goes first and comes back once all have changed.
func distributeTables(ctx context.Context, tx pgx.Tx) ([]string, error) {
	rows, err := tx.Query(ctx, `select format('%I.%I', n.nspname, c.relname) from pg_class c
		join pg_namespace n on n.oid = c.relnamespace
		where n.nspname in ('public', 'private') and c.relkind in ('r', 'p')
			and exists (select 1 from pg_attribute a
				where a.attrelid = c.oid and a.attname = 'facilitator_id' and a.attnum > 0 and not a.attisdropped)
			-- A table Citus added to its metadata by itself (a local table
			-- with a key to a reference table) is not distributed yet.
			and not exists (select 1 from pg_dist_partition p where p.logicalrelid = c.oid and p.partmethod = 'h')
		-- The colocation source first.
		order by format('%I.%I', n.nspname, c.relname) <> $1, n.nspname, c.relname`, colocationSource)
	if err != nil {
		return nil, err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var usersReferenced bool
	if err := tx.QueryRow(ctx, `select exists (select 1 from pg_dist_partition
		where logicalrelid = 'auth.users'::regclass and partmethod = 'n')`).Scan(&usersReferenced); err != nil {
		return nil, err
	}
	if len(tables) == 0 && usersReferenced {
		return nil, nil
	}

	type foreignKey struct{ table, name, definition string }
	rows, err = tx.Query(ctx, `select c.conrelid::regclass::text, c.conname::text, pg_get_constraintdef(c.oid)
		from pg_constraint c
		where c.contype = 'f'
			and (c.conrelid = any($1::regclass[]) or c.confrelid = any($1::regclass[])
				or (c.confrelid = 'auth.users'::regclass and not $2))
		order by 1, 2`, tables, usersReferenced)
	if err != nil {
		return nil, err
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (foreignKey, error) {
		var k foreignKey
		return k, row.Scan(&k.table, &k.name, &k.definition)
	})
	if err != nil {
		return nil, err
	}
	var done []string
	for _, k := range keys {
		if _, err := tx.Exec(ctx, `alter table `+k.table+` drop constraint `+pgx.Identifier{k.name}.Sanitize()); err != nil {
			return nil, fmt.Errorf("drop %s of %s: %w", k.name, k.table, err)
		}
	}
	for _, table := range tables {
		switch {
		case table == colocationSource:
			_, err = tx.Exec(ctx, `select create_distributed_table($1, 'facilitator_id')`, table)
		case slices.Contains(apartTables, table):
			_, err = tx.Exec(ctx, `select create_distributed_table($1, 'facilitator_id', colocate_with => 'none')`, table)
		default:
			_, err = tx.Exec(ctx, `select create_distributed_table($1, 'facilitator_id', colocate_with => $2)`,
				table, colocationSource)
		}
		if err != nil {
			return nil, fmt.Errorf("distribute %s: %w", table, err)
		}
		done = append(done, "distributed "+table+" by facilitator_id")
	}
	if !usersReferenced {
		if _, err := tx.Exec(ctx, `select create_reference_table('auth.users')`); err != nil {
			return nil, fmt.Errorf("make auth.users a reference table: %w", err)
		}
		done = append(done, "auth.users is a reference table")
	}
	for _, k := range keys {
		definition := citusForeignKey(k.definition)
		if _, err := tx.Exec(ctx, `alter table `+k.table+` add constraint `+pgx.Identifier{k.name}.Sanitize()+` `+definition); err != nil {
			return nil, fmt.Errorf("add %s back to %s: %w", k.name, k.table, err)
		}
		if definition != k.definition {
			done = append(done, fmt.Sprintf("%s of %s is %s (Citus refuses %s)", k.name, k.table, definition, k.definition))
		}
	}
	return done, nil
}

// distributeFunctions creates on every worker the functions of public and
// auth that Citus has not created there yet. The triggers and policies run
// on the workers, and so do the functions the service's statements call;
// Citus creates a function on its workers as it is created on the
// coordinator once the extension is there, but not those created before
// (a database migrated before `create extension citus`), bar what a
// distributed table depends on by name (a trigger's own function, not the
// functions it calls). A function of a table's row (search_vector,
// migration 0009) cannot be created on the workers, where the rows are
// the shards', and is left out: nothing run there may call it.
func distributeFunctions(ctx context.Context, tx pgx.Tx) ([]string, error) {
	rows, err := tx.Query(ctx, `select p.oid::regprocedure::text from pg_proc p
		where p.pronamespace in ('public'::regnamespace, 'auth'::regnamespace)
			and not exists (select 1 from pg_dist_object o where o.classid = 'pg_proc'::regclass and o.objid = p.oid)
			and not exists (select 1 from unnest(p.proargtypes) a(type) join pg_type t on t.oid = a.type where t.typrelid <> 0)
		order by 1`)
	if err != nil {
		return nil, err
	}
	functions, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var done []string
	for _, f := range functions {
		if _, err := tx.Exec(ctx, `select create_distributed_function($1)`, f); err != nil {
			return nil, fmt.Errorf("create %s on the workers: %w", f, err)
		}
		done = append(done, "created "+f+" on the workers")
	}
	return done, nil
}

// setNullOrDefault is a foreign key's ON DELETE or ON UPDATE SET NULL or
// SET DEFAULT, with or without a list of columns.
var setNullOrDefault = regexp.MustCompile(` ON (DELETE|UPDATE) SET (NULL|DEFAULT)( \([^)]*\))?`)

// citusForeignKey is the foreign key definition as Citus takes it. Citus
// refuses SET NULL and SET DEFAULT in a key that holds the distribution
// column, even when only another of its columns would be set (the memories'
// key of their session, migration 0005, clears session_id alone). Such a
// key checks without acting: deleting a session that memories name is
// refused instead of clearing their session. Nothing deletes a session
// but its learner's or its user's deletion, which takes the memories too,
// and erasure, which removes the memories first.
func citusForeignKey(definition string) string {
	return setNullOrDefault.ReplaceAllString(definition, "")
}
