package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app/apptest"
	"mentormemory/migrations"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// cliFileName is the Supabase CLI's pattern for a migration file: the
// version, then the name it records.
var cliFileName = regexp.MustCompile(`^([0-9]+)_(.*)\.sql$`)

// The file names are the CLI's, one per migration, in the same order, and
// fixed: each version is derived from the migration's number alone.
func TestSupabaseMigrationsAreNamedForTheCLI(t *testing.T) {
	names, err := fs.Glob(migrations.Files, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	files := supabaseMigrations(t)
	if len(files) != len(names) {
		t.Fatalf("%d files for %d migrations", len(files), len(names))
	}
	previous := ""
	for i, f := range files {
		migration := strings.TrimSuffix(names[i], ".sql")
		m := cliFileName.FindStringSubmatch(f.FileName)
		if m == nil || len(m[1]) != len("YYYYMMDDHHMMSS") || m[2] != migration {
			t.Errorf("file %q of migration %s: want <YYYYMMDDHHMMSS>_%s.sql", f.FileName, migration, migration)
			continue
		}
		if m[1] <= previous {
			t.Errorf("file %q does not come after version %s", f.FileName, previous)
		}
		previous = m[1]
	}

	for migration, want := range map[string]string{
		"0001_supabase_compat": "20000101000001",
		"0024_pending_actions": "20000101000024",
		"0075_later":           "20000101000115",
	} {
		if got, err := postgres.SupabaseVersion(migration); err != nil || got != want {
			t.Errorf("SupabaseVersion(%q) = %q, %v; want %q", migration, got, err, want)
		}
	}
	if _, err := postgres.SupabaseVersion("pending_actions"); err == nil {
		t.Error("a migration without a number got a version")
	}
}

// Every file but 0001's holds its migration as it is, and records it where
// server migrate would.
func TestSupabaseMigrationsHoldEachMigrationUnchanged(t *testing.T) {
	for _, f := range supabaseMigrations(t) {
		migration := cliFileName.FindStringSubmatch(f.FileName)[2]
		record := fmt.Sprintf("insert into public.memory_migrations (version) values ('%s');", migration)
		if !strings.Contains(f.SQL, record) {
			t.Errorf("%s does not record %s in memory_migrations", f.FileName, migration)
		}
		if migration == "0001_supabase_compat" {
			continue
		}
		body, err := migrations.Files.ReadFile(migration + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(f.SQL, string(body)) {
			t.Errorf("%s does not hold migrations/%s.sql unchanged", f.FileName, migration)
		}
	}
}

// Applied in order by the Supabase CLI (played here by psql, one
// transaction per file, as the CLI does) to a database that has what
// Supabase has, the files build the schema server migrate builds, and
// leave server migrate, which the server runs at start, nothing to do.
func TestSupabaseCLIBuildsTheSchemaServerMigrateBuilds(t *testing.T) {
	pgtest.SkipOnCitus(t, "Supabase has no Citus; a distributed schema's dump differs from the one the CLI builds "+
		"(Citus's objects, foreign keys without SET NULL)")
	psql, pgDump := pgtest.Binary(t, "psql"), pgtest.Binary(t, "pg_dump")
	files := writeSupabaseMigrations(t)

	byServer := pgtest.NewDatabase(t)
	byCLI := pgtest.NewDatabaseBuiltBy(t, func(ctx context.Context, dbURL string) error {
		if err := applyAsSupabase(ctx, psql, dbURL); err != nil {
			return err
		}
		for _, path := range files {
			if out, err := applyAsTheCLI(ctx, psql, dbURL, path); err != nil {
				return fmt.Errorf("%s: %w\n%s", filepath.Base(path), err, out)
			}
		}
		return nil
	})

	want, got := dumpedSchema(t, pgDump, byServer), dumpedSchema(t, pgDump, byCLI)
	if !slices.ContainsFunc(want, func(o string) bool { return strings.Contains(o, "CREATE TABLE public.learners") }) {
		t.Fatalf("the dump of server migrate's schema lacks the learners:\n%s", strings.Join(want, ""))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the schema the CLI built differs from server migrate's:\n%s", schemaDifference(want, got))
	}

	pool := openPool(t, byCLI)
	applied, err := postgres.Migrate(t.Context(), pool)
	if err != nil || len(applied) != 0 {
		t.Errorf("server migrate after the CLI applied %v, %v; want nothing", applied, err)
	}
	wantApplied := appliedByServer(t, openPool(t, byServer))
	if got := appliedByServer(t, pool); !slices.Equal(got, wantApplied) {
		t.Errorf("memory_migrations after the CLI = %v, want %v", got, wantApplied)
	}
	if got, want := recordedByTheCLI(t, byCLI), fileNames(files); !slices.Equal(got, want) {
		t.Errorf("the CLI's history = %v, want %v", got, want)
	}
}

// A team that ran server migrate and switches to the CLI: the CLI's first
// push is refused with the step to take; once the CLI's history holds the
// first migration (supabase migration repair), server migrate records the
// others it applied, and the CLI has nothing left to apply.
func TestSwitchingFromServerMigrateToTheSupabaseCLI(t *testing.T) {
	psql := pgtest.Binary(t, "psql")
	files := writeSupabaseMigrations(t)
	dbURL := pgtest.NewDatabase(t)
	ctx := t.Context()

	first := filepath.Base(files[0])
	out, err := applyAsTheCLI(ctx, psql, dbURL, files[0])
	if err == nil || !strings.Contains(out, "was applied by server migrate") ||
		!strings.Contains(out, "supabase migration repair --status applied "+first[:len("YYYYMMDDHHMMSS")]) {
		t.Fatalf("the CLI applying %s after server migrate: %v\n%s", first, err, out)
	}
	if got := recordedByTheCLI(t, dbURL); len(got) != 0 {
		t.Fatalf("the refused file was recorded: %v", got)
	}

	pool := openPool(t, dbURL)
	m := cliFileName.FindStringSubmatch(first)
	if _, err := pool.Exec(ctx, `insert into supabase_migrations.schema_migrations (version, name) values ($1, $2)`, m[1], m[2]); err != nil {
		t.Fatal(err)
	}
	applied, err := postgres.Migrate(ctx, pool)
	if err != nil || len(applied) != 0 {
		t.Fatalf("server migrate once more applied %v, %v; want nothing", applied, err)
	}
	if got, want := recordedByTheCLI(t, dbURL), fileNames(files); !slices.Equal(got, want) {
		t.Errorf("the CLI's history after server migrate = %v, want %v", got, want)
	}
}

// A team that applies its own migrations with the CLI and the service's
// with server migrate keeps a history of its own alone: versions its
// supabase/migrations lacks would stop its next push.
func TestServerMigrateLeavesATeamsOwnCLIHistoryAlone(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	pool := openPool(t, dbURL)
	if _, err := pool.Exec(t.Context(), supabaseCLIHistory+`
		insert into supabase_migrations.schema_migrations (version, name) values ('20250301120000', 'team_profiles');`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	if got, want := recordedByTheCLI(t, dbURL), []string{"20250301120000_team_profiles.sql"}; !slices.Equal(got, want) {
		t.Errorf("the team's CLI history after server migrate = %v, want %v", got, want)
	}
}

func supabaseMigrations(t *testing.T) []postgres.SupabaseMigration {
	t.Helper()
	files, err := postgres.SupabaseMigrations()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// writeSupabaseMigrations emits the files into a directory of the test's
// and returns their paths, in order.
func writeSupabaseMigrations(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, f := range supabaseMigrations(t) {
		path := filepath.Join(dir, f.FileName)
		if err := os.WriteFile(path, []byte(f.SQL), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// applyAsSupabase gives the database what a Supabase project has before
// any migration of its own: the auth schema, its roles and grants, as
// migration 0001 creates them on a plain Postgres.
func applyAsSupabase(ctx context.Context, psql, dbURL string) error {
	body, err := migrations.Files.ReadFile("0001_supabase_compat.sql")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction", "-d", dbURL, "-f", "-")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("the Supabase schema: %w\n%s", err, out)
	}
	return nil
}

// supabaseCLIHistory is how the CLI creates its history before it applies
// anything.
const supabaseCLIHistory = `
create schema if not exists supabase_migrations;
create table if not exists supabase_migrations.schema_migrations (version text not null primary key);
alter table supabase_migrations.schema_migrations add column if not exists statements text[];
alter table supabase_migrations.schema_migrations add column if not exists name text;`

// applyAsTheCLI applies one migration file as `supabase db push` does: its
// statements and the record of its version and name in one transaction,
// on a fresh session. It returns psql's output.
func applyAsTheCLI(ctx context.Context, psql, dbURL, path string) (string, error) {
	m := cliFileName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return "", fmt.Errorf("%s is not named as the CLI wants", path)
	}
	history := exec.CommandContext(ctx, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dbURL, "-c", supabaseCLIHistory)
	if out, err := history.CombinedOutput(); err != nil {
		return string(out), err
	}
	record := fmt.Sprintf("insert into supabase_migrations.schema_migrations (version, name) values ('%s', '%s')", m[1], m[2])
	out, err := exec.CommandContext(ctx, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction",
		"-d", dbURL, "-f", path, "-c", record).CombinedOutput()
	return string(out), err
}

// dumpedSchema is the database's schema as pg_dump writes it, cut into its
// objects and sorted, so the order they were created in does not count;
// less comments and blank lines, and less the records of applied
// migrations: the CLI's, and memory_migrations, whose grants differ
// (server migrate creates it before migration 0001 sets the default
// privileges, the CLI after them, as on Supabase). The tests compare what
// memory_migrations holds instead.
func dumpedSchema(t *testing.T, pgDump, dbURL string) []string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), pgDump, "--schema-only",
		"--exclude-schema=supabase_migrations", "--exclude-table=public.memory_migrations", "-d", dbURL).Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	var objects []string
	var object strings.Builder
	for line := range strings.Lines(string(out)) {
		switch {
		// Every object starts with a header naming it, its type and owner.
		case strings.HasPrefix(line, "-- Name: "):
			objects = append(objects, object.String())
			object.Reset()
			object.WriteString(line)
		// pg_dump 15.14 and later guard their output with a random key.
		case strings.HasPrefix(line, "--"), strings.HasPrefix(line, `\restrict`),
			strings.HasPrefix(line, `\unrestrict`), strings.TrimSpace(line) == "":
		default:
			object.WriteString(line)
		}
	}
	objects = append(objects, object.String())
	slices.Sort(objects)
	return objects
}

// schemaDifference lists the objects in one dump and not the other.
func schemaDifference(byServer, byCLI []string) string {
	var b strings.Builder
	for _, o := range byServer {
		if !slices.Contains(byCLI, o) {
			fmt.Fprintf(&b, "only from server migrate:\n%s\n", o)
		}
	}
	for _, o := range byCLI {
		if !slices.Contains(byServer, o) {
			fmt.Fprintf(&b, "only from the CLI:\n%s\n", o)
		}
	}
	return b.String()
}

// appliedByServer is what memory_migrations records.
func appliedByServer(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	return apptest.Column[string](t, pool, `select version from public.memory_migrations order by version`)
}

// recordedByTheCLI is the CLI's history, as its file names: nothing before
// the CLI has created it.
func recordedByTheCLI(t *testing.T, dbURL string) []string {
	t.Helper()
	pool := openPool(t, dbURL)
	if apptest.Column[bool](t, pool, `select to_regclass('supabase_migrations.schema_migrations') is not null`)[0] == false {
		return nil
	}
	return apptest.Column[string](t, pool,
		`select version || '_' || name || '.sql' from supabase_migrations.schema_migrations order by version`)
}

func fileNames(paths []string) []string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names
}

func openPool(t *testing.T, dbURL string) *pgxpool.Pool {
	t.Helper()
	pool, err := postgres.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
