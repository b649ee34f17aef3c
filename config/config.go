// Package config reads the service's settings from the environment once, at
// start, applies defaults and validates them, naming the variable at fault.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

type Config struct {
	DatabaseURL string // DATABASE_URL
	Port        int    // PORT, default 8080

	JWTSecret   string // SUPABASE_JWT_SECRET: verifies HS256 tokens
	SupabaseURL string // SUPABASE_URL: verifies ES256/RS256 tokens from its JWKS
	JWTIssuer   string // SUPABASE_JWT_ISSUER, optional: required iss claim

	// SupabaseAnonKey (SUPABASE_ANON_KEY, optional) is the project's public
	// anon key. The web client needs it, with SupabaseURL, to sign users in
	// through Supabase Auth; it is public by design, so /api/config hands it
	// to the browser.
	SupabaseAnonKey string
	// SessionCheck (SUPABASE_AUTH_CHECK=remote; default off) confirms each
	// token's session with Supabase Auth, so a signed-out user's token stops
	// working before it expires. SessionCheckWritesOnly
	// (SUPABASE_AUTH_CHECK_SCOPE=writes; default all) confines it to requests
	// that may change data; SessionCheckCache (SUPABASE_AUTH_CHECK_CACHE,
	// default 30s) is how long an answer is reused.
	SessionCheck           bool
	SessionCheckWritesOnly bool
	SessionCheckCache      time.Duration
	// CORSOrigins (CORS_ALLOWED_ORIGINS, comma-separated) are the browser
	// origins, besides the service's own, allowed to call the API, e.g. the
	// Next.js app's. Empty: none. Never a wildcard.
	CORSOrigins []string
	// DevMode (MENTOR_DEV_MODE, default false) enables POST /api/dev/token,
	// which mints tokens for the demo facilitator with SUPABASE_JWT_SECRET so
	// the web client can be used without a Supabase project. Local only:
	// anyone who can reach the server can then act as the demo facilitator.
	DevMode bool

	OpenAIKey     string        // OPENAI_API_KEY; empty selects the offline summarizer
	OpenAIBaseURL string        // OPENAI_BASE_URL, any OpenAI-compatible server
	OpenAIModel   string        // OPENAI_MODEL, default gpt-4o-mini
	OpenAITimeout time.Duration // OPENAI_TIMEOUT, default 20s

	// Embeddings let recall rank learner memories by meaning. Without
	// OPENAI_EMBEDDING_MODEL recall works by words alone. The base URL and
	// key default to the chat model's.
	EmbeddingModel   string // OPENAI_EMBEDDING_MODEL, e.g. text-embedding-3-small
	EmbeddingBaseURL string // OPENAI_EMBEDDING_BASE_URL
	EmbeddingKey     string // OPENAI_EMBEDDING_API_KEY

	ArchiveTurns int // MEMORY_ARCHIVE_TURNS, default 50
	// MemoryWorkers (MEMORY_WORKERS, default 4) is how many memory
	// extractions run at once in this process.
	MemoryWorkers int
}

// FromEnv reads the configuration through getenv and validates it.
func FromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		DatabaseURL:      strings.TrimSpace(getenv("DATABASE_URL")),
		JWTSecret:        getenv("SUPABASE_JWT_SECRET"),
		SupabaseURL:      strings.TrimRight(strings.TrimSpace(getenv("SUPABASE_URL")), "/"),
		JWTIssuer:        strings.TrimSpace(getenv("SUPABASE_JWT_ISSUER")),
		SupabaseAnonKey:  strings.TrimSpace(getenv("SUPABASE_ANON_KEY")),
		OpenAIKey:        strings.TrimSpace(getenv("OPENAI_API_KEY")),
		OpenAIBaseURL:    strings.TrimSpace(getenv("OPENAI_BASE_URL")),
		OpenAIModel:      strings.TrimSpace(getenv("OPENAI_MODEL")),
		EmbeddingModel:   strings.TrimSpace(getenv("OPENAI_EMBEDDING_MODEL")),
		EmbeddingBaseURL: strings.TrimSpace(getenv("OPENAI_EMBEDDING_BASE_URL")),
		EmbeddingKey:     strings.TrimSpace(getenv("OPENAI_EMBEDDING_API_KEY")),
	}
	var errs []error
	var err error
	if cfg.Port, err = intVar(getenv, "PORT", 8080, 1, 65535); err != nil {
		errs = append(errs, err)
	}
	if cfg.ArchiveTurns, err = intVar(getenv, "MEMORY_ARCHIVE_TURNS", 50, 2, 10_000); err != nil {
		errs = append(errs, err)
	}
	if cfg.MemoryWorkers, err = intVar(getenv, "MEMORY_WORKERS", 4, 1, 64); err != nil {
		errs = append(errs, err)
	}
	if cfg.OpenAITimeout, err = durationVar(getenv, "OPENAI_TIMEOUT", 20*time.Second); err != nil {
		errs = append(errs, err)
	}
	if cfg.DevMode, err = boolVar(getenv, "MENTOR_DEV_MODE"); err != nil {
		errs = append(errs, err)
	}
	if cfg.SessionCheck, err = choiceVar(getenv, "SUPABASE_AUTH_CHECK", "off", "remote"); err != nil {
		errs = append(errs, err)
	}
	if cfg.SessionCheckWritesOnly, err = choiceVar(getenv, "SUPABASE_AUTH_CHECK_SCOPE", "all", "writes"); err != nil {
		errs = append(errs, err)
	}
	if cfg.SessionCheckCache, err = durationVar(getenv, "SUPABASE_AUTH_CHECK_CACHE", 30*time.Second); err != nil {
		errs = append(errs, err)
	}
	if cfg.CORSOrigins, err = originsVar(getenv, "CORS_ALLOWED_ORIGINS"); err != nil {
		errs = append(errs, err)
	}
	if cfg.OpenAIModel == "" {
		cfg.OpenAIModel = "gpt-4o-mini"
	}
	if cfg.EmbeddingBaseURL == "" {
		cfg.EmbeddingBaseURL = cfg.OpenAIBaseURL
	}
	if cfg.EmbeddingKey == "" {
		cfg.EmbeddingKey = cfg.OpenAIKey
	}
	errs = append(errs, cfg.validate()...)
	return cfg, errors.Join(errs...)
}

func (c Config) validate() []error {
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("DATABASE_URL is required (postgres://user:pass@host:5432/db)"))
	} else if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") &&
		!strings.Contains(c.DatabaseURL, "=") {
		errs = append(errs, errors.New("DATABASE_URL must be a postgres:// URL or a key=value connection string"))
	}
	if c.JWTSecret == "" && c.SupabaseURL == "" {
		errs = append(errs, errors.New("SUPABASE_JWT_SECRET or SUPABASE_URL is required to verify access tokens"))
	}
	if c.JWTSecret != "" && len(c.JWTSecret) < 32 {
		errs = append(errs, errors.New("SUPABASE_JWT_SECRET must be at least 32 characters"))
	}
	if c.SupabaseURL != "" {
		if err := checkHTTPURL(c.SupabaseURL); err != nil {
			errs = append(errs, fmt.Errorf("SUPABASE_URL %w", err))
		}
	}
	if c.SupabaseAnonKey != "" {
		if c.SupabaseURL == "" {
			errs = append(errs, errors.New("SUPABASE_ANON_KEY needs SUPABASE_URL: the web client signs in at that project"))
		}
		// The key travels in a request header; a pasted newline or space
		// would only show up later as a puzzling sign-in failure.
		if strings.ContainsFunc(c.SupabaseAnonKey, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			errs = append(errs, errors.New("SUPABASE_ANON_KEY must not contain spaces or control characters"))
		}
	}
	if c.SessionCheck && (c.SupabaseURL == "" || c.SupabaseAnonKey == "") {
		errs = append(errs, errors.New("SUPABASE_AUTH_CHECK=remote needs SUPABASE_URL and SUPABASE_ANON_KEY to ask Supabase Auth"))
	}
	if c.DevMode && c.JWTSecret == "" {
		errs = append(errs, errors.New("MENTOR_DEV_MODE=true needs SUPABASE_JWT_SECRET to sign the demo facilitator's tokens"))
	}
	if c.OpenAIBaseURL != "" {
		if err := checkHTTPURL(c.OpenAIBaseURL); err != nil {
			errs = append(errs, fmt.Errorf("OPENAI_BASE_URL %w", err))
		}
	}
	if c.EmbeddingModel != "" && c.EmbeddingKey == "" {
		errs = append(errs, errors.New("OPENAI_EMBEDDING_MODEL needs OPENAI_EMBEDDING_API_KEY or OPENAI_API_KEY"))
	}
	if c.EmbeddingBaseURL != "" && c.EmbeddingBaseURL != c.OpenAIBaseURL {
		if err := checkHTTPURL(c.EmbeddingBaseURL); err != nil {
			errs = append(errs, fmt.Errorf("OPENAI_EMBEDDING_BASE_URL %w", err))
		}
	}
	return errs
}

func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an http(s) URL")
	}
	return nil
}

func intVar(getenv func(string) string, name string, def, lo, hi int) (int, error) {
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return def, fmt.Errorf("%s must be a whole number from %d to %d, got %q", name, lo, hi, raw)
	}
	return n, nil
}

// boolVar accepts the usual spellings (true/false, 1/0, t/f) and nothing
// else, so a typo such as "ture" is an error rather than a silent false.
func boolVar(getenv func(string) string, name string) (bool, error) {
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, fmt.Errorf("%s must be true or false, got %q", name, raw)
	}
	return b, nil
}

// choiceVar reads a variable that is either off (empty or the first value)
// or on (the second), and refuses anything else.
func choiceVar(getenv func(string) string, name, off, on string) (bool, error) {
	switch raw := strings.TrimSpace(getenv(name)); raw {
	case "", off:
		return false, nil
	case on:
		return true, nil
	default:
		return false, fmt.Errorf("%s must be %s or %s, got %q", name, off, on, raw)
	}
}

// originsVar reads a comma-separated list of browser origins
// (scheme://host[:port], nothing after). A wildcard is refused: the API
// answers with facilitators' data, so every origin is named.
func originsVar(getenv func(string) string, name string) ([]string, error) {
	var origins []string
	for _, raw := range strings.Split(getenv(name), ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		if raw == "*" {
			return nil, fmt.Errorf("%s must name each origin (https://app.example.com); a wildcard is not allowed", name)
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("%s must list origins such as https://app.example.com, got %q", name, raw)
		}
		origins = append(origins, u.Scheme+"://"+strings.ToLower(u.Host))
	}
	return origins, nil
}

func durationVar(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return def, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d <= 0 {
		return def, fmt.Errorf("%s must be a positive duration such as 20s, got %q", name, raw)
	}
	return d, nil
}
