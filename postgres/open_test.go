package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Prepared statements break behind a transaction pooler, and exec mode
// costs every statement its planning: Open must pick by where it connects.
func TestOpenPicksTheStatementModeForTheConnection(t *testing.T) {
	cases := []struct {
		url  string
		want pgx.QueryExecMode
	}{
		{"postgres://u@db.example.supabase.co:5432/postgres", pgx.QueryExecModeCacheStatement},
		{"postgres://u@aws-0-eu-west-1.pooler.supabase.com:5432/postgres", pgx.QueryExecModeCacheStatement},
		{"postgres://u@aws-0-eu-west-1.pooler.supabase.com:6543/postgres", pgx.QueryExecModeExec},
		{"postgres://u@pgbouncer.internal:6432/app?default_query_exec_mode=exec", pgx.QueryExecModeExec},
		{"postgres://u@localhost:6543/app?default_query_exec_mode=cache_describe", pgx.QueryExecModeCacheDescribe},
	}
	for _, tc := range cases {
		// The pool connects lazily: nothing is dialled here.
		pool, err := Open(context.Background(), tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		got := pool.Config().ConnConfig.DefaultQueryExecMode
		pool.Close()
		if got != tc.want {
			t.Errorf("%s: mode %v, want %v", tc.url, got, tc.want)
		}
	}
}
