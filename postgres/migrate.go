package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/migrations"
)

// migrationLockKey serialises concurrent migrators (several servers starting
// at once). It is a transaction-level lock, so it works through a transaction
// pooler, where session-level locks would leak between clients.
const migrationLockKey = 7_361_902_411

// bookkeepingTableSQL creates the record of applied migrations; the files
// for the Supabase CLI create it too (SupabaseMigrations).
const bookkeepingTableSQL = `create table if not exists public.memory_migrations (
  version text primary key,
  applied_at timestamptz not null default now()
);
alter table public.memory_migrations enable row level security;`

// Migrate applies, in order, each embedded migration not applied yet, each in
// its own transaction, and records it in public.memory_migrations, and in
// the Supabase CLI's history when the database has one. On a database
// already distributed on Citus it keeps it so (MigrateOnCitus), so that
// starting the server after an upgrade cannot leave a new table on the
// coordinator alone.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (applied []string, err error) {
	applied, _, err = MigrateOnCitus(ctx, pool)
	return applied, err
}

// migrate is Migrate, calling after (when not nil) once each migration is
// applied. With through set, it stops after that migration, as a database
// migrated by an earlier release did (tests of upgrades).
func migrate(ctx context.Context, pool *pgxpool.Pool, through string, after func(version string) error) (applied []string, err error) {
	names, err := fs.Glob(migrations.Files, "*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	if through != "" {
		last := slices.Index(names, through+".sql")
		if last < 0 {
			return nil, fmt.Errorf("no migration %s", through)
		}
		names = names[:last+1]
	}

	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return execEach(ctx, tx, bookkeepingTableSQL)
	}); err != nil {
		return nil, fmt.Errorf("create migrations table: %w", err)
	}

	for _, name := range names {
		version := strings.TrimSuffix(name, ".sql")
		body, err := migrations.Files.ReadFile(name)
		if err != nil {
			return applied, err
		}
		done, err := applyMigration(ctx, pool, version, string(body))
		if err != nil {
			return applied, fmt.Errorf("migration %s: %w", version, err)
		}
		if done {
			applied = append(applied, version)
			if after != nil {
				if err := after(version); err != nil {
					return applied, fmt.Errorf("after migration %s: %w", version, err)
				}
			}
		}
	}
	if err := recordForSupabaseCLI(ctx, pool, names); err != nil {
		return applied, fmt.Errorf("record the migrations in supabase_migrations.schema_migrations: %w", err)
	}
	return applied, nil
}

func applyMigration(ctx context.Context, pool *pgxpool.Pool, version, body string) (bool, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx)

	if _, err := tx.Exec(ctx, `select pg_advisory_xact_lock($1)`, int64(migrationLockKey)); err != nil {
		return false, err
	}
	var exists bool
	if err := tx.QueryRow(ctx,
		`select exists (select 1 from public.memory_migrations where version = $1)`, version,
	).Scan(&exists); err != nil {
		return false, err
	}
	if exists {
		return false, nil
	}
	if err := execEach(ctx, tx, body); err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `insert into public.memory_migrations (version) values ($1)`, version); err != nil {
		return false, err
	}
	return true, tx.Commit(ctx)
}

// execEach runs a migration's statements one at a time, in the
// transaction. Citus passes a statement on to its worker nodes as it was
// sent, and refuses a string of several ("cannot insert multiple commands
// into a prepared statement"), so none is sent. Each goes by the extended
// protocol, which refuses such a string on plain Postgres too: a
// statement SplitStatements failed to separate fails every test that
// migrates, not only a deployment on Citus.
func execEach(ctx context.Context, tx pgx.Tx, sql string) error {
	for _, statement := range SplitStatements(sql) {
		if _, err := tx.Conn().PgConn().ExecParams(ctx, statement, nil, nil, nil, nil).Close(); err != nil {
			return fmt.Errorf("%w\nin the statement:\n%s", err, statement)
		}
	}
	return nil
}
