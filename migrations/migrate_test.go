package migrations_test

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
	"mentormemory/migrations"
	"mentormemory/postgres"
)

// TestMigrateIsIdempotent checks that migrating an up-to-date database
// applies nothing and changes nothing.
func TestMigrateIsIdempotent(t *testing.T) {
	pool := newDatabase(t) // migrated once already
	versions := func() []string {
		t.Helper()
		return apptest.Column[string](t, pool, `select version from public.memory_migrations order by version`)
	}
	files, err := fs.Glob(migrations.Files, "*.sql")
	if err != nil || len(files) < 2 {
		t.Fatalf("embedded migrations: %v %v", files, err)
	}
	var want []string
	for _, f := range files {
		want = append(want, strings.TrimSuffix(path.Base(f), ".sql"))
	}
	if got := versions(); !slices.Equal(got, want) {
		t.Fatalf("recorded migrations = %v, want %v", got, want)
	}

	for i := range 2 {
		applied, err := postgres.Migrate(t.Context(), pool)
		if err != nil {
			t.Fatalf("migrate again (#%d): %v", i+1, err)
		}
		if len(applied) != 0 {
			t.Errorf("migrate again (#%d) applied %v, want nothing", i+1, applied)
		}
	}
	if got := versions(); !slices.Equal(got, want) {
		t.Errorf("recorded migrations after migrating again = %v, want %v", got, want)
	}

	// 0001 promises to leave an existing auth surface (Supabase's) alone:
	// run again over the one it created, it must succeed. Rolled back.
	t.Run("0001 over an existing auth schema", func(t *testing.T) {
		body, err := migrations.Files.ReadFile("0001_supabase_compat.sql")
		if err != nil {
			t.Fatal(err)
		}
		tx, err := pool.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(t.Context())
		if _, err := tx.Exec(t.Context(), string(body), pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Errorf("0001 run again: %v", err)
		}
	})
}
