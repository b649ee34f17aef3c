package config

import (
	"maps"
	"strings"
	"testing"
	"time"

	"mentormemory/mentor"
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
	if cfg.Web.Port != 8080 || cfg.Database.ArchiveTurns != 50 || cfg.Model.Chat.Model != "gpt-4o-mini" || cfg.Model.Chat.Timeout != 20*time.Second ||
		cfg.Auth.DevMode || cfg.Auth.SupabaseAnonKey != "" || cfg.Model.Workers != 4 || cfg.Model.ChatConfigured() || cfg.Model.EmbeddingConfigured() ||
		cfg.Model.CounselorDeadline != 60*time.Second || cfg.Model.CounselorContextTokens != 12_000 {
		t.Fatalf("defaults not applied: %+v", cfg)
	}
	want := mentor.Limits{ReadsPerMinute: 300, SearchesPerMinute: 60, WritesPerMinute: 120, ModelRequestsPerMinute: 30,
		LearnersPerDay: 100, TurnsPerDay: 2_000, ModelCallsPerDay: 1_000, ModelTokensPerDay: 2_000_000}
	if cfg.Limits.Limits != want {
		t.Fatalf("limits %+v, want the defaults %+v", cfg.Limits.Limits, want)
	}
	if cfg.Web.RequestsInFlight != 64 || cfg.Web.BodyBytesInFlight != 16<<20 || cfg.Web.BusyWait != time.Second || cfg.Database.PerFacilitator != 2 {
		t.Fatalf("limits on work in flight: %+v %+v", cfg.Web, cfg.Database)
	}
	if cfg.Database.ReplicaURL != "" || cfg.Database.ReplicaMaxLag != time.Second {
		t.Fatalf("no replica by default, and a bound of 1s on its lag: %+v", cfg.Database)
	}
}

// A hot standby takes the reads that may lag, within the bound set.
func TestAReplicaIsReadWithinTheLagSet(t *testing.T) {
	cfg, err := FromEnv(envOf(map[string]string{
		"DATABASE_URL": "postgres://u@primary/db", "SUPABASE_JWT_SECRET": strings.Repeat("s", 32),
		"DATABASE_REPLICA_URL": " postgres://u@standby/db ", "DATABASE_REPLICA_MAX_LAG": "250ms",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Database.ReplicaURL != "postgres://u@standby/db" || cfg.Database.ReplicaMaxLag != 250*time.Millisecond {
		t.Fatalf("replica settings: %+v", cfg.Database)
	}
}

// Each limit can be set, 0 lifts one, and MENTOR_LIMITS=off lifts them all.
func TestLimits(t *testing.T) {
	base := map[string]string{"DATABASE_URL": "postgres://u@localhost/db", "SUPABASE_JWT_SECRET": strings.Repeat("s", 32)}
	with := func(vars map[string]string) map[string]string {
		maps.Copy(vars, base)
		return vars
	}
	cfg, err := FromEnv(envOf(with(map[string]string{
		"MENTOR_LIMIT_READS_PER_MINUTE": "10", "MENTOR_LIMIT_SEARCHES_PER_MINUTE": "0", "MENTOR_LIMIT_WRITES_PER_MINUTE": "12",
		"MENTOR_LIMIT_MODEL_REQUESTS_PER_MINUTE": "13", "MENTOR_LIMIT_LEARNERS_PER_DAY": "14", "MENTOR_LIMIT_TURNS_PER_DAY": "15",
		"MENTOR_LIMIT_MODEL_CALLS_PER_DAY": "16", "MENTOR_LIMIT_MODEL_TOKENS_PER_DAY": "17000000",
	})))
	want := mentor.Limits{ReadsPerMinute: 10, WritesPerMinute: 12, ModelRequestsPerMinute: 13,
		LearnersPerDay: 14, TurnsPerDay: 15, ModelCallsPerDay: 16, ModelTokensPerDay: 17_000_000}
	if err != nil || cfg.Limits.Limits != want {
		t.Errorf("limits %+v (error %v), want %+v", cfg.Limits.Limits, err, want)
	}
	cfg, err = FromEnv(envOf(with(map[string]string{"MENTOR_LIMITS": "off", "MENTOR_LIMIT_TURNS_PER_DAY": "15"})))
	if err != nil || cfg.Limits.Limits != (mentor.Limits{}) {
		t.Errorf("MENTOR_LIMITS=off: limits %+v (error %v), want none", cfg.Limits.Limits, err)
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
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "COUNSELOR_DEADLINE": "0s"}, "COUNSELOR_DEADLINE must be a positive duration"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "COUNSELOR_DEADLINE": "85s"}, "COUNSELOR_DEADLINE must be at most 1m20s, so the server's write timeout (1m30s) leaves time to answer"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "COUNSELOR_CONTEXT_TOKENS": "1999"}, "COUNSELOR_CONTEXT_TOKENS must be a whole number from 2000 to 1000000"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "COUNSELOR_CONTEXT_TOKENS": "12k"}, "COUNSELOR_CONTEXT_TOKENS must be a whole number from 2000 to 1000000"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_JWT_SECRET": strings.Repeat("s", 32), "MENTOR_DEV_MODE": "yes please"}, "MENTOR_DEV_MODE must be true or false"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "MENTOR_DEV_MODE": "true"}, "MENTOR_DEV_MODE=true needs SUPABASE_JWT_SECRET"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_JWT_SECRET": strings.Repeat("s", 32), "SUPABASE_URL": "https://p.supabase.co", "MENTOR_DEV_MODE": "true"}, "MENTOR_DEV_MODE=true is for a local server without a Supabase project"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_JWT_SECRET": strings.Repeat("s", 32), "SUPABASE_ANON_KEY": "anon", "MENTOR_DEV_MODE": "1"}, "MENTOR_DEV_MODE=true is for a local server without a Supabase project"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_JWT_SECRET": strings.Repeat("s", 32), "SUPABASE_ANON_KEY": "anon"}, "SUPABASE_ANON_KEY needs SUPABASE_URL"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "SUPABASE_ANON_KEY": "an on"}, "SUPABASE_ANON_KEY must not contain spaces"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "SUPABASE_AUTH_CHECK": "remote"}, "SUPABASE_AUTH_CHECK=remote needs SUPABASE_URL and SUPABASE_ANON_KEY"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "SUPABASE_AUTH_CHECK": "yes"}, "SUPABASE_AUTH_CHECK must be off or remote"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "SUPABASE_AUTH_CHECK_SCOPE": "reads"}, "SUPABASE_AUTH_CHECK_SCOPE must be all or writes"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "SUPABASE_AUTH_CHECK_CACHE": "-1s"}, "SUPABASE_AUTH_CHECK_CACHE must be a positive duration"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "MEMORY_WORKERS": "0"}, "MEMORY_WORKERS must be a whole number from 1 to 64"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "CORS_ALLOWED_ORIGINS": "*"}, "a wildcard is not allowed"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "MENTOR_LIMITS": "no"}, "MENTOR_LIMITS must be on or off"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "MENTOR_LIMIT_TURNS_PER_DAY": "-1"}, "MENTOR_LIMIT_TURNS_PER_DAY must be a whole number from 0"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "MENTOR_LIMIT_MODEL_TOKENS_PER_DAY": "2M"}, "MENTOR_LIMIT_MODEL_TOKENS_PER_DAY must be a whole number"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "MAX_REQUESTS_IN_FLIGHT": "many"}, "MAX_REQUESTS_IN_FLIGHT must be a whole number from 1"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "MAX_BODY_MB_IN_FLIGHT": "1"}, "MAX_BODY_MB_IN_FLIGHT must be a whole number from 2"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "BUSY_WAIT": "0s"}, "BUSY_WAIT must be a positive duration"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "DB_CONCURRENCY_PER_FACILITATOR": "0"}, "DB_CONCURRENCY_PER_FACILITATOR must be a whole number from 1"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "CORS_ALLOWED_ORIGINS": "https://app.example.com/path"}, "CORS_ALLOWED_ORIGINS must list origins"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "CORS_ALLOWED_ORIGINS": "app.example.com"}, "CORS_ALLOWED_ORIGINS must list origins"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "CRON_SECRET": "guessable"}, "CRON_SECRET must be at least 16 characters"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "METRICS_TOKEN": "guessable"}, "METRICS_TOKEN must be at least 16 characters"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "METRICS_ADDR": "9464"}, "METRICS_ADDR must be host:port"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "DATABASE_REPLICA_URL": "standby:5432"}, "DATABASE_REPLICA_URL must be a postgres:// URL"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "DATABASE_REPLICA_URL": "postgres://x"}, "DATABASE_REPLICA_URL must name a hot standby of the database, not DATABASE_URL itself"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "DATABASE_REPLICA_URL": "postgres://y", "DATABASE_REPLICA_MAX_LAG": "a second"}, "DATABASE_REPLICA_MAX_LAG must be a positive duration"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "DATABASE_REPLICA_URL": "postgres://y", "DATABASE_REPLICA_MAX_LAG": "10ms"}, "DATABASE_REPLICA_MAX_LAG must be from 100ms to 1h"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "DATABASE_REPLICA_URL": "postgres://y", "DATABASE_REPLICA_MAX_LAG": "2h"}, "DATABASE_REPLICA_MAX_LAG must be from 100ms to 1h"},
		{map[string]string{"DATABASE_URL": "postgres://x", "SUPABASE_URL": "https://p.supabase.co", "DATABASE_REPLICA_MAX_LAG": "5s"}, "DATABASE_REPLICA_MAX_LAG needs DATABASE_REPLICA_URL"},
	}
	for _, tc := range cases {
		_, err := FromEnv(envOf(tc.vars))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("env %v: error %v, want it to contain %q", tc.vars, err, tc.want)
		}
	}
}

func TestWebClientSettings(t *testing.T) {
	cfg, err := FromEnv(envOf(map[string]string{
		"DATABASE_URL":        "postgres://u@localhost/db",
		"SUPABASE_JWT_SECRET": strings.Repeat("s", 32),
		"SUPABASE_URL":        "https://p.supabase.co/",
		"SUPABASE_ANON_KEY":   " eyJhbGciOiJIUzI1NiJ9.anon.key \n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.SupabaseAnonKey != "eyJhbGciOiJIUzI1NiJ9.anon.key" || cfg.Auth.SupabaseURL != "https://p.supabase.co" {
		t.Fatalf("web client settings: %+v", cfg)
	}
	for raw, want := range map[string]bool{"false": false, "0": false, "1": true, "": false} {
		cfg, err := FromEnv(envOf(map[string]string{
			"DATABASE_URL": "postgres://u@localhost/db", "SUPABASE_JWT_SECRET": strings.Repeat("s", 32), "MENTOR_DEV_MODE": raw,
		}))
		if err != nil || cfg.Auth.DevMode != want {
			t.Errorf("MENTOR_DEV_MODE=%q: dev mode %v, error %v; want %v", raw, cfg.Auth.DevMode, err, want)
		}
	}
}

func TestSessionCheckAndCORSSettings(t *testing.T) {
	cfg, err := FromEnv(envOf(map[string]string{
		"DATABASE_URL":              "postgres://u@localhost/db",
		"SUPABASE_URL":              "https://p.supabase.co",
		"SUPABASE_ANON_KEY":         "anon",
		"SUPABASE_AUTH_CHECK":       "remote",
		"SUPABASE_AUTH_CHECK_SCOPE": "writes",
		"SUPABASE_AUTH_CHECK_CACHE": "5s",
		"CORS_ALLOWED_ORIGINS":      " https://App.example.com , http://localhost:3000,",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Auth.SessionCheck || !cfg.Auth.SessionCheckWritesOnly || cfg.Auth.SessionCheckCache != 5*time.Second {
		t.Errorf("session check settings: %+v", cfg)
	}
	want := []string{"https://app.example.com", "http://localhost:3000"}
	if strings.Join(cfg.Web.CORSOrigins, " ") != strings.Join(want, " ") {
		t.Errorf("CORS origins %q, want %q", cfg.Web.CORSOrigins, want)
	}

	cfg, err = FromEnv(envOf(map[string]string{
		"DATABASE_URL": "postgres://u@localhost/db", "SUPABASE_JWT_SECRET": strings.Repeat("s", 32),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.SessionCheck || cfg.Auth.SessionCheckWritesOnly || cfg.Auth.SessionCheckCache != 30*time.Second || len(cfg.Web.CORSOrigins) != 0 {
		t.Errorf("defaults: the session check must be off and no origin allowed: %+v", cfg)
	}
}

func TestEachSectionValidatesOnlyItsOwnSettings(t *testing.T) {
	// A database-only command (server migrate) runs with no token settings
	// and a malformed model timeout; serving would refuse both.
	cfg := Read(envOf(map[string]string{"DATABASE_URL": "postgres://u@localhost/db", "OPENAI_TIMEOUT": "soon"}))
	if err := cfg.Database.Validate(); err != nil {
		t.Fatalf("the database section is valid: %v", err)
	}
	if err := cfg.Auth.Validate(); err == nil || !strings.Contains(err.Error(), "SUPABASE_JWT_SECRET or SUPABASE_URL is required") {
		t.Errorf("auth section: %v", err)
	}
	if err := cfg.Model.Validate(); err == nil || !strings.Contains(err.Error(), "OPENAI_TIMEOUT must be a positive duration") {
		t.Errorf("model section: %v", err)
	}
	if err := cfg.Web.Validate(); err != nil {
		t.Errorf("web section: %v", err)
	}
	err := cfg.Validate()
	for _, want := range []string{"SUPABASE_JWT_SECRET or SUPABASE_URL", "OPENAI_TIMEOUT"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the whole configuration's error %v lacks %q", err, want)
		}
	}
	// A malformed number is the problem of its own section only.
	cfg = Read(envOf(map[string]string{"DATABASE_URL": "postgres://u@localhost/db", "PORT": "http"}))
	if cfg.Database.Validate() != nil || cfg.Web.Validate() == nil {
		t.Errorf("PORT belongs to the web section: database %v, web %v", cfg.Database.Validate(), cfg.Web.Validate())
	}
}

func TestModelSettingsFallBackToTheChatModel(t *testing.T) {
	cfg, err := FromEnv(envOf(map[string]string{
		"DATABASE_URL": "postgres://u@localhost/db", "SUPABASE_JWT_SECRET": strings.Repeat("s", 32),
		"OPENAI_API_KEY": "sk-chat", "OPENAI_BASE_URL": "http://models.internal/v1", "OPENAI_TIMEOUT": "7s",
		"OPENAI_EMBEDDING_MODEL": "text-embedding-3-small",
	}))
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Model.Embedding
	if e.APIKey != "sk-chat" || e.BaseURL != "http://models.internal/v1" || e.Timeout != 7*time.Second || e.Model != "text-embedding-3-small" {
		t.Errorf("embedding settings: %+v", e)
	}
	if !cfg.Model.ChatConfigured() || !cfg.Model.EmbeddingConfigured() {
		t.Error("both models are configured")
	}
}
