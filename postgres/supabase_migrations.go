package postgres

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/migrations"
)

// The Supabase CLI (supabase db push, supabase migration up) applies
// supabase/migrations/<version>_<name>.sql in version order, each file's
// statements in one transaction, and records <version> and <name> in
// supabase_migrations.schema_migrations. SupabaseMigrations writes the
// embedded migrations as such files, so a Supabase team can apply them
// with the CLI instead of `server migrate`.

// supabaseEpoch is the version of migration 0000: migration N is version
// supabaseEpoch + N seconds, so 0024 is 20000101000024. A fixed date keeps
// every version the same however often the files are emitted, and one
// before any Supabase project's own migrations (Supabase began in 2020)
// makes the service's tables exist before a team's migrations that use them.
var supabaseEpoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// supabaseCompatMigration creates on a plain Postgres what a Supabase
// project has already, and which its migrating role may not change there.
const supabaseCompatMigration = "0001_supabase_compat"

// migrationNumber is the NNNN of NNNN_name, a migration's version here.
var migrationNumber = regexp.MustCompile(`^([0-9]+)_[a-z0-9_]+$`)

// SupabaseMigration is one file for the Supabase CLI.
type SupabaseMigration struct {
	FileName string // <version>_<migration>.sql, e.g. 20000101000024_0024_pending_actions.sql
	SQL      string
}

// SupabaseVersion is the CLI's version of migration NNNN_name: the
// timestamp supabaseEpoch + NNNN seconds, as YYYYMMDDHHMMSS.
func SupabaseVersion(migration string) (string, error) {
	m := migrationNumber.FindStringSubmatch(migration)
	if m == nil {
		return "", fmt.Errorf("migration %q is not named NNNN_name", migration)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return "", fmt.Errorf("migration %q: %w", migration, err)
	}
	return supabaseEpoch.Add(time.Duration(n) * time.Second).Format("20060102150405"), nil
}

// SupabaseMigrations returns one file for the CLI per embedded migration,
// in order. The CLI's name of each (the part after the version) is the
// migration's version here, so the two histories name the same migration
// alike. Each file
//   - refuses to run when `server migrate` applied its migration already,
//     naming the one step that records it for the CLI, instead of failing
//     on the second create or, worse, running a data change twice;
//   - records its migration in public.memory_migrations too, so that the
//     server, which migrates at start, skips what the CLI applied;
//   - takes the lock `server migrate` takes, so the two never apply the
//     same migration at once.
//
// Migration 0001 becomes a check that the Supabase parts it would create are
// there: on Supabase they exist, belong to Supabase's own roles, and the
// migrating role may not alter them (no new roles, nothing in schema auth).
func SupabaseMigrations() ([]SupabaseMigration, error) {
	names, err := fs.Glob(migrations.Files, "*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	files := make([]SupabaseMigration, 0, len(names))
	for _, name := range names {
		migration := strings.TrimSuffix(name, ".sql")
		version, err := SupabaseVersion(migration)
		if err != nil {
			return nil, err
		}
		body, err := migrations.Files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if line, found := psqlMetaCommand(string(body)); found {
			return nil, fmt.Errorf("migration %s: the Supabase CLI runs SQL only, not the psql command %q", migration, line)
		}
		if migration == supabaseCompatMigration {
			body = []byte(supabasePresentSQL + "\n" + bookkeepingTableSQL + "\n")
		}
		// A last line comment would swallow the record after it.
		if !bytes.HasSuffix(body, []byte("\n")) {
			body = append(body, '\n')
		}
		files = append(files, SupabaseMigration{
			FileName: version + "_" + migration + ".sql",
			SQL:      fmt.Sprintf(supabaseFileSQL, migration, migrationLockKey, version, body),
		})
	}
	return files, nil
}

// psqlMetaCommand finds a line that is a psql command (\i, \set…), which
// the CLI would send to the server as SQL.
func psqlMetaCommand(body string) (string, bool) {
	for line := range strings.Lines(body) {
		if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, `\`) {
			return trimmed, true
		}
	}
	return "", false
}

// supabaseFileSQL is a CLI migration file: its header, the guard, the
// migration, its record. Its arguments: the migration (NNNN_name, no quote
// in it: SupabaseVersion checks), the migration lock's key, the CLI's
// version, the migration's SQL. The guard's dollar quote has a tag no
// migration uses, as the CLI splits statements at the semicolons outside
// quotes.
const supabaseFileSQL = `-- Migration %[1]s of mentormemory, for the Supabase CLI.
-- Written by ` + "`server migrate --emit-supabase`" + ` from migrations/%[1]s.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(%[2]d);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '%[1]s') then
      raise exception 'migration %[1]s was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied %[3]s; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

%[4]s
insert into public.memory_migrations (version) values ('%[1]s');
`

// supabasePresentSQL stands for migration 0001 on Supabase: it checks that
// what 0001 would create is there, and changes none of it.
const supabasePresentSQL = `-- On Supabase, the schema auth, auth.users, auth.uid(), auth.role(),
-- auth.jwt(), the roles anon, authenticated and service_role and their
-- grants exist already, owned by Supabase's roles, which the migrating role
-- may not change: migration 0001, which creates them on a plain Postgres,
-- is left out, and this checks they are there.
do $supabase_cli$
declare
  missing text;
begin
  select string_agg(part, ', ') into missing
  from (values
    ('schema auth', to_regnamespace('auth') is not null),
    ('schema extensions', to_regnamespace('extensions') is not null),
    ('table auth.users', to_regclass('auth.users') is not null),
    ('function auth.uid()', to_regprocedure('auth.uid()') is not null),
    ('function auth.role()', to_regprocedure('auth.role()') is not null),
    ('function auth.jwt()', to_regprocedure('auth.jwt()') is not null),
    ('role anon', to_regrole('anon') is not null),
    ('role authenticated', to_regrole('authenticated') is not null),
    ('role service_role', to_regrole('service_role') is not null)
  ) as parts(part, present)
  where not present;
  if missing is not null then
    raise exception 'not a Supabase database: % missing', missing
      using hint = 'Apply migrations/0001_supabase_compat.sql first on a plain Postgres, or migrate it with server migrate.';
  end if;
  if not pg_has_role(current_user, 'authenticated', 'member') then
    raise exception 'role % is not a member of authenticated, as Supabase''s postgres is', current_user;
  end if;
end
$supabase_cli$;

-- The record of applied migrations that server migrate keeps.`

// recordForSupabaseCLI adds to the CLI's history each migration applied
// here that it lacks, once the CLI applies the service's migrations in this
// database: its history holds the first one. The server migrates at start,
// often before a deploy's `supabase db push`; without the record the CLI
// would apply the migration again. A history of a team's own migrations
// alone is left as it is: versions the team's supabase/migrations lacks
// would stop its next push.
func recordForSupabaseCLI(ctx context.Context, pool *pgxpool.Pool, names []string) error {
	var versions, migrationNames []string
	for _, name := range names {
		migration := strings.TrimSuffix(name, ".sql")
		version, err := SupabaseVersion(migration)
		if err != nil {
			return err
		}
		versions = append(versions, version)
		migrationNames = append(migrationNames, migration)
	}
	var cliKeepsHistory, cliAppliesOurs bool
	if err := pool.QueryRow(ctx,
		`select to_regclass('supabase_migrations.schema_migrations') is not null`,
	).Scan(&cliKeepsHistory); err != nil {
		return err
	}
	if !cliKeepsHistory || len(versions) == 0 {
		return nil
	}
	if err := pool.QueryRow(ctx,
		`select exists (select 1 from supabase_migrations.schema_migrations where version = $1)`, versions[0],
	).Scan(&cliAppliesOurs); err != nil || !cliAppliesOurs {
		return err
	}
	_, err := pool.Exec(ctx, `
		insert into supabase_migrations.schema_migrations (version, name)
		select cli.version, cli.name
		from unnest($1::text[], $2::text[]) as cli(version, name)
		join public.memory_migrations applied on applied.version = cli.name
		on conflict (version) do nothing`, versions, migrationNames)
	return err
}
