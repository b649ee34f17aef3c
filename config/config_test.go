package config

import (
	"strings"
	"testing"
	"time"
)

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestDefaults(t *testing.T) {
	cfg, err := FromEnv(envOf(map[string]string{
		"DATABASE_URL":        "postgres://u@localhost/db",
		"SUPABASE_JWT_SECRET": strings.Repeat("s", 32),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 8080 || cfg.ArchiveTurns != 50 || cfg.OpenAIModel != "gpt-4o-mini" || cfg.OpenAITimeout != 20*time.Second {
		t.Fatalf("defaults not applied: %+v", cfg)
	}
}

func TestEachErrorNamesItsVariable(t *testing.T) {
	cases := []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"SUPABASE_JWT_SECRET": strings.Repeat("s", 32)}, "DATABASE_URL is required"},
		{map[string]string{"DATABASE_URL": "mysql://x"}, "DATABASE_URL must be"},
		{map[string]string{"DATABASE_URL": "postgres://x"}, "SUPABASE_JWT_SECRET or SUPABASE_URL is required"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_JWT_SECRET": "short"}, "SUPABASE_JWT_SECRET must be at least 32"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "ftp://x"}, "SUPABASE_URL must be an http(s) URL"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "PORT": "http"}, "PORT must be a whole number"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "MEMORY_ARCHIVE_TURNS": "1"}, "MEMORY_ARCHIVE_TURNS must be a whole number from 2"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "OPENAI_TIMEOUT": "soon"}, "OPENAI_TIMEOUT must be a positive duration"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "OPENAI_BASE_URL": "localhost:1234"}, "OPENAI_BASE_URL must be an http(s) URL"},
	}
	for _, tc := range cases {
		_, err := FromEnv(envOf(tc.vars))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("env %v: error %v, want it to contain %q", tc.vars, err, tc.want)
		}
	}
}
