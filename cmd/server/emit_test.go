package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mentormemory/postgres"
)

// `server migrate --emit-supabase DIR` needs no database, writes the same
// files however often it runs, and leaves the team's own migrations in DIR
// alone.
func TestMigrateEmitsSupabaseMigrations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "supabase", "migrations")
	teamFile := filepath.Join(dir, "20250301120000_team_profiles.sql")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(teamFile, []byte("create table team_profiles ();\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }

	want, err := postgres.SupabaseMigrations()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"migrate", "--emit-supabase", dir}, noEnv, &out); err != nil {
			t.Fatalf("emit #%d: %v", i+1, err)
		}
		if lines := strings.Count(out.String(), "wrote "); lines != len(want) {
			t.Errorf("emit #%d said it wrote %d files, want %d:\n%s", i+1, lines, len(want), out.String())
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(want)+1 {
			t.Errorf("emit #%d: %d files in the directory, want %d and the team's", i+1, len(entries), len(want))
		}
		for _, f := range want {
			got, err := os.ReadFile(filepath.Join(dir, f.FileName))
			if err != nil || string(got) != f.SQL {
				t.Errorf("emit #%d: %s differs from postgres.SupabaseMigrations (%v)", i+1, f.FileName, err)
			}
		}
	}
	if got, err := os.ReadFile(teamFile); err != nil || string(got) != "create table team_profiles ();\n" {
		t.Errorf("the team's migration was changed: %q, %v", got, err)
	}

	err = run(context.Background(), []string{"migrate", "--emit-supabase", dir, "extra"}, noEnv, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("migrate with a stray argument: %v", err)
	}
}
