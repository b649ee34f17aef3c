package postgres_test

import (
	"slices"
	"testing"

	"mentormemory/postgres"
)

func TestStatementsAreCutAtTheirSemicolonsOnly(t *testing.T) {
	cases := []struct {
		name string
		sql  string
		want []string
	}{
		{"plain statements", "select 1; select 2;\n", []string{"select 1", "select 2"}},
		{"the last without a semicolon", "select 1;\nselect 2", []string{"select 1", "select 2"}},
		{"a string", "select 'a;b', 'it''s; here';", []string{"select 'a;b', 'it''s; here'"}},
		{"an escape string", `select E'a\';b'; select 2`, []string{`select E'a\';b'`, "select 2"}},
		{"a quoted name", `select 1 as "a;b"; select 2`, []string{`select 1 as "a;b"`, "select 2"}},
		{"a dollar-quoted body", "do $$ begin perform 1; end $$; select 2",
			[]string{"do $$ begin perform 1; end $$", "select 2"}},
		{"a tagged body holding $$", "create function f() returns text language sql as $f$ select '$$;' $f$; select 2",
			[]string{"create function f() returns text language sql as $f$ select '$$;' $f$", "select 2"}},
		{"parameters are no tags", "select $1; select $2", []string{"select $1", "select $2"}},
		{"a line comment", "-- one; two\nselect 1; -- three;\n", []string{"-- one; two\nselect 1"}},
		{"a nested block comment", "/* a /* b; */ c; */ select 1;", []string{"/* a /* b; */ c; */ select 1"}},
		{"comments alone are no statement", "select 1;\n-- the end;\n/* really; */\n", []string{"select 1"}},
		{"empty statements", ";; select 1 ;;", []string{"select 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := postgres.SplitStatements(c.sql); !slices.Equal(got, c.want) {
				t.Fatalf("SplitStatements(%q) = %q, want %q", c.sql, got, c.want)
			}
		})
	}
}
