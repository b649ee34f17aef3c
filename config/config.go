// Package config reads the service's settings from the environment once, at
// start, applies defaults and validates them, naming the variable at fault.
//
// The settings come in sections (database, auth, model, web, limits), each
// with its own Validate, so that a command checks only what it uses:
// `server migrate` needs the database alone, `server simulate` the
// database, the model and the limits, and serving needs them all.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"mentormemory/counselor"
	"mentormemory/llm"
)

// Config is every setting of the service.
type Config struct {
	Database Database
	Auth     Auth
	Model    Model
	Web      Web
	Limits   Limits
}

// Database is where the memory is kept and how it archives.
type Database struct {
	URL string // DATABASE_URL
	// ArchiveTurns (MEMORY_ARCHIVE_TURNS, default 50) is how many turns a
	// conversation's active segment holds before it goes to the archive.
	ArchiveTurns int
	// PerFacilitator (DB_CONCURRENCY_PER_FACILITATOR, default 2) is how
	// many of one facilitator's requests may use the database at once, so
	// that one facilitator cannot hold every connection of the pool (4 on
	// 2 cores); the others wait up to Web.BusyWait, then get a 503.
	PerFacilitator int
	// ReplicaURL (DATABASE_REPLICA_URL, optional) is a hot standby of the
	// database, kept by streaming replication, that answers the reads
	// which may be a moment behind: search, recall, session openings,
	// memory lists and exports. A facilitator's reads stay on the primary
	// until the standby has replayed their own last write (as this server
	// process saw it); a standby that is down or lags more than
	// ReplicaMaxLag sends them all back to the primary. Unset: every read
	// is the primary's.
	ReplicaURL string
	// ReplicaMaxLag (DATABASE_REPLICA_MAX_LAG, default 1s, from 100ms to
	// 1h) is how far behind the primary the standby may be and still
	// answer.
	ReplicaMaxLag time.Duration
	problems      []error
}

// Auth is how access tokens are verified, and the optional checks and
// sign-in helpers around them.
type Auth struct {
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
	// DevMode (MENTOR_DEV_MODE, default false) enables POST /api/dev/token,
	// which mints tokens for the demo facilitator with SUPABASE_JWT_SECRET so
	// the web client can be used without a Supabase project. Local only:
	// anyone who can reach the server can then act as the demo facilitator,
	// so it is refused alongside Supabase settings and on Vercel.
	DevMode  bool
	problems []error
}

// Model is the language model and the embedding model, both optional.
type Model struct {
	// Chat (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL default
	// gpt-4o-mini, OPENAI_TIMEOUT default 20s) writes summaries, extracts
	// memories and answers the counselor. Without a key the offline
	// summarizer runs, extraction is off and the counselor says how to
	// configure one.
	Chat llm.Config
	// Embedding (OPENAI_EMBEDDING_MODEL, OPENAI_EMBEDDING_BASE_URL,
	// OPENAI_EMBEDDING_API_KEY; the base URL, key and timeout default to
	// the chat model's) lets recall rank learner memories by meaning.
	// Without a model recall works by words alone.
	Embedding llm.Config
	// Workers (MEMORY_WORKERS, default 4) is how many memory extractions
	// run at once in this process.
	Workers int
	// CounselorDeadline (COUNSELOR_DEADLINE, default 60s) bounds one
	// counselor chat in all: every model call and tool of it. It must end
	// before WriteTimeout does, so the client hears the 502.
	CounselorDeadline time.Duration
	// CounselorContextTokens (COUNSELOR_CONTEXT_TOKENS, default
	// counselor.DefaultContextTokens, 12,000; from 2,000 to 1,000,000)
	// bounds what one model call of a counselor reply is sent, counted by
	// a BPE tokenizer: the persona and tools, the pinned facts, the memory
	// and as many of the session's newest exchanges as fit.
	CounselorContextTokens int
	problems               []error
}

// WriteTimeout is how long the HTTP server gives itself to answer a
// request once its headers are read (app.HTTPServer). It is named here so
// COUNSELOR_DEADLINE can be checked against it.
const WriteTimeout = 90 * time.Second

// answerMargin is what a counselor chat leaves of WriteTimeout for reading
// the request and writing the answer.
const answerMargin = 10 * time.Second

// Web is the HTTP server and the browsers it answers.
type Web struct {
	Port int // PORT, default 8080
	// CORSOrigins (CORS_ALLOWED_ORIGINS, comma-separated) are the browser
	// origins, besides the service's own, allowed to call the API, e.g. the
	// Next.js app's. Empty: none. Never a wildcard.
	CORSOrigins []string
	// RequestsInFlight (MAX_REQUESTS_IN_FLIGHT, default 64) and
	// BodyBytesInFlight (MAX_BODY_MB_IN_FLIGHT, in MiB, default 16) bound
	// the signed-in requests served at once and the bodies they announce (a
	// body of unknown length counts as the largest allowed, 2 MiB). A
	// request over either waits up to BusyWait (BUSY_WAIT, default 1s),
	// then gets a 503 with Retry-After.
	RequestsInFlight  int
	BodyBytesInFlight int64
	BusyWait          time.Duration
	// CronSecret (CRON_SECRET), when set, opens GET /api/jobs/run to a
	// caller that sends it as a bearer token: Vercel Cron does, and so the
	// background work of a deployment that is only the function runs.
	CronSecret string
	// Metrics in Prometheus's format are served at /metrics on a listener
	// of their own, MetricsAddr (METRICS_ADDR, e.g. 127.0.0.1:9464), kept
	// off the public port; and/or on the public port to a caller that
	// sends MetricsToken (METRICS_TOKEN) as a bearer token, for a platform
	// with one port (Vercel). Neither: not served. The figures name no
	// facilitator, but they tell traffic and backlog, which is the
	// operator's.
	MetricsAddr  string
	MetricsToken string
	problems     []error
}

// minCronSecret is the shortest CRON_SECRET accepted: it guards work that
// spends the model budget.
const minCronSecret = 16

// The defaults of the limits on work in flight; app.New applies them to a
// Config built in code that leaves the limits zero. A 2 MB post holds about
// 6 MB while it is served, and with the server's GOGC of 400 the heap grows
// to five times what is live before a collection: 16 MiB of bodies is about
// 50 MB live and 250 MB of heap, without a memory limit.
const (
	DefaultPerFacilitator   = 2
	DefaultRequestsInFlight = 64
	DefaultBodyMBInFlight   = 16
	DefaultBusyWait         = time.Second
	DefaultReplicaMaxLag    = time.Second
)

// The bounds of DATABASE_REPLICA_MAX_LAG: the standby's lag is measured a
// few times within the bound (postgres.NewReplica), at most every 50 ms, so
// a tighter one could not be told; a looser one than an hour would let
// reads be older than anyone expects of "the memory".
const (
	minReplicaMaxLag = 100 * time.Millisecond
	maxReplicaMaxLag = time.Hour
)

// ChatConfigured reports whether a language model is configured.
func (m Model) ChatConfigured() bool { return m.Chat.APIKey != "" }

// EmbeddingConfigured reports whether an embedding model is configured.
func (m Model) EmbeddingConfigured() bool { return m.Embedding.Model != "" }

// Read reads every setting through getenv and applies the defaults. A value
// that cannot be read (a malformed number, say) is kept as a problem of its
// section, which that section's Validate reports.
func Read(getenv func(string) string) Config {
	return Config{
		Database: readDatabase(&reader{getenv: getenv}),
		Auth:     readAuth(&reader{getenv: getenv}),
		Model:    readModel(&reader{getenv: getenv}),
		Web:      readWeb(&reader{getenv: getenv}),
		Limits:   readLimits(&reader{getenv: getenv}),
	}
}

// FromEnv reads every setting and validates them all, as serving needs.
func FromEnv(getenv func(string) string) (Config, error) {
	cfg := Read(getenv)
	return cfg, cfg.Validate()
}

// Validate checks every section.
func (c Config) Validate() error {
	return errors.Join(c.Database.Validate(), c.Auth.Validate(), c.Model.Validate(), c.Web.Validate(), c.Limits.Validate())
}

func readDatabase(r *reader) Database {
	d := Database{
		URL:            r.text("DATABASE_URL"),
		ArchiveTurns:   r.number("MEMORY_ARCHIVE_TURNS", 50, 2, 10_000),
		PerFacilitator: r.number("DB_CONCURRENCY_PER_FACILITATOR", DefaultPerFacilitator, 1, 1000),
		ReplicaURL:     r.text("DATABASE_REPLICA_URL"),
		ReplicaMaxLag:  r.duration("DATABASE_REPLICA_MAX_LAG", DefaultReplicaMaxLag),
	}
	if d.ReplicaMaxLag < minReplicaMaxLag || d.ReplicaMaxLag > maxReplicaMaxLag {
		r.fail("DATABASE_REPLICA_MAX_LAG must be from 100ms to 1h, got %q", r.text("DATABASE_REPLICA_MAX_LAG"))
		d.ReplicaMaxLag = DefaultReplicaMaxLag
	}
	if d.ReplicaURL == "" && r.text("DATABASE_REPLICA_MAX_LAG") != "" {
		r.fail("DATABASE_REPLICA_MAX_LAG needs DATABASE_REPLICA_URL, the standby it bounds")
	}
	d.problems = r.problems
	return d
}

// Validate checks the database settings.
func (d Database) Validate() error {
	errs := d.problems
	switch {
	case d.URL == "":
		errs = append(errs, errors.New("DATABASE_URL is required (postgres://user:pass@host:5432/db)"))
	case !isConnectionString(d.URL):
		errs = append(errs, errors.New("DATABASE_URL must be a postgres:// URL or a key=value connection string"))
	}
	switch {
	case d.ReplicaURL == "":
	case !isConnectionString(d.ReplicaURL):
		errs = append(errs, errors.New("DATABASE_REPLICA_URL must be a postgres:// URL or a key=value connection string"))
	case d.ReplicaURL == d.URL:
		errs = append(errs, errors.New("DATABASE_REPLICA_URL must name a hot standby of the database, not DATABASE_URL itself"))
	}
	return errors.Join(errs...)
}

// isConnectionString tells a Postgres connection string from a mistake
// (another database's URL, a bare host name); pgx checks the rest when it
// connects.
func isConnectionString(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") || strings.Contains(s, "=")
}

func readAuth(r *reader) Auth {
	a := Auth{
		JWTSecret:              r.getenv("SUPABASE_JWT_SECRET"),
		SupabaseURL:            strings.TrimRight(r.text("SUPABASE_URL"), "/"),
		JWTIssuer:              r.text("SUPABASE_JWT_ISSUER"),
		SupabaseAnonKey:        r.text("SUPABASE_ANON_KEY"),
		SessionCheck:           r.choice("SUPABASE_AUTH_CHECK", "off", "remote"),
		SessionCheckWritesOnly: r.choice("SUPABASE_AUTH_CHECK_SCOPE", "all", "writes"),
		SessionCheckCache:      r.duration("SUPABASE_AUTH_CHECK_CACHE", 30*time.Second),
		DevMode:                r.boolean("MENTOR_DEV_MODE"),
	}
	a.problems = r.problems
	return a
}

// Validate checks the auth settings.
func (a Auth) Validate() error {
	errs := a.problems
	if a.JWTSecret == "" && a.SupabaseURL == "" {
		errs = append(errs, errors.New("SUPABASE_JWT_SECRET or SUPABASE_URL is required to verify access tokens"))
	}
	if a.JWTSecret != "" && len(a.JWTSecret) < 32 {
		errs = append(errs, errors.New("SUPABASE_JWT_SECRET must be at least 32 characters"))
	}
	if a.SupabaseURL != "" {
		if err := checkHTTPURL(a.SupabaseURL); err != nil {
			errs = append(errs, fmt.Errorf("SUPABASE_URL %w", err))
		}
	}
	if a.SupabaseAnonKey != "" {
		if a.SupabaseURL == "" {
			errs = append(errs, errors.New("SUPABASE_ANON_KEY needs SUPABASE_URL: the web client signs in at that project"))
		}
		// The key travels in a request header; a pasted newline or space
		// would only show up later as a puzzling sign-in failure.
		if strings.ContainsFunc(a.SupabaseAnonKey, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			errs = append(errs, errors.New("SUPABASE_ANON_KEY must not contain spaces or control characters"))
		}
	}
	if a.SessionCheck && (a.SupabaseURL == "" || a.SupabaseAnonKey == "") {
		errs = append(errs, errors.New("SUPABASE_AUTH_CHECK=remote needs SUPABASE_URL and SUPABASE_ANON_KEY to ask Supabase Auth"))
	}
	if a.DevMode && a.JWTSecret == "" {
		errs = append(errs, errors.New("MENTOR_DEV_MODE=true needs SUPABASE_JWT_SECRET to sign the demo facilitator's tokens"))
	}
	// Dev sign-in hands a token to anyone who asks; with a Supabase project
	// configured, the secret it signs with is the project's own.
	if a.DevMode && (a.SupabaseURL != "" || a.SupabaseAnonKey != "") {
		errs = append(errs, errors.New("MENTOR_DEV_MODE=true is for a local server without a Supabase project: unset it, or SUPABASE_URL and SUPABASE_ANON_KEY"))
	}
	return errors.Join(errs...)
}

func readModel(r *reader) Model {
	m := Model{
		Chat: llm.Config{
			APIKey:  r.text("OPENAI_API_KEY"),
			BaseURL: r.text("OPENAI_BASE_URL"),
			Model:   r.text("OPENAI_MODEL"),
			Timeout: r.duration("OPENAI_TIMEOUT", llm.DefaultChatTimeout),
		},
		Workers:           r.number("MEMORY_WORKERS", 4, 1, 64),
		CounselorDeadline: r.duration("COUNSELOR_DEADLINE", counselor.DefaultDeadline),
		CounselorContextTokens: r.number("COUNSELOR_CONTEXT_TOKENS", counselor.DefaultContextTokens,
			counselor.MinContextTokens, counselor.MaxContextTokens),
	}
	if m.Chat.Model == "" {
		m.Chat.Model = llm.DefaultChatModel
	}
	m.Embedding = llm.Config{
		APIKey:  cmp.Or(r.text("OPENAI_EMBEDDING_API_KEY"), m.Chat.APIKey),
		BaseURL: cmp.Or(r.text("OPENAI_EMBEDDING_BASE_URL"), m.Chat.BaseURL),
		Model:   r.text("OPENAI_EMBEDDING_MODEL"),
		Timeout: m.Chat.Timeout,
	}
	m.problems = r.problems
	return m
}

// Validate checks the model settings.
func (m Model) Validate() error {
	errs := m.problems
	if m.Chat.BaseURL != "" {
		if err := checkHTTPURL(m.Chat.BaseURL); err != nil {
			errs = append(errs, fmt.Errorf("OPENAI_BASE_URL %w", err))
		}
	}
	if longest := WriteTimeout - answerMargin; m.CounselorDeadline > longest {
		errs = append(errs, fmt.Errorf("COUNSELOR_DEADLINE must be at most %v, so the server's write timeout (%v) leaves time to answer", longest, WriteTimeout))
	}
	if m.Embedding.Model != "" && m.Embedding.APIKey == "" {
		errs = append(errs, errors.New("OPENAI_EMBEDDING_MODEL needs OPENAI_EMBEDDING_API_KEY or OPENAI_API_KEY"))
	}
	if m.Embedding.BaseURL != "" && m.Embedding.BaseURL != m.Chat.BaseURL {
		if err := checkHTTPURL(m.Embedding.BaseURL); err != nil {
			errs = append(errs, fmt.Errorf("OPENAI_EMBEDDING_BASE_URL %w", err))
		}
	}
	return errors.Join(errs...)
}

func readWeb(r *reader) Web {
	w := Web{
		Port:             r.number("PORT", 8080, 1, 65535),
		CORSOrigins:      r.origins("CORS_ALLOWED_ORIGINS"),
		RequestsInFlight: r.number("MAX_REQUESTS_IN_FLIGHT", DefaultRequestsInFlight, 1, 100_000),
		// At least one body of the largest size must fit.
		BodyBytesInFlight: int64(r.number("MAX_BODY_MB_IN_FLIGHT", DefaultBodyMBInFlight, 2, 1<<20)) << 20,
		BusyWait:          r.duration("BUSY_WAIT", DefaultBusyWait),
		CronSecret:        r.text("CRON_SECRET"),
		MetricsAddr:       r.text("METRICS_ADDR"),
		MetricsToken:      r.text("METRICS_TOKEN"),
	}
	if w.CronSecret != "" && len(w.CronSecret) < minCronSecret {
		r.fail("CRON_SECRET must be at least %d characters", minCronSecret)
	}
	if w.MetricsToken != "" && len(w.MetricsToken) < minCronSecret {
		r.fail("METRICS_TOKEN must be at least %d characters", minCronSecret)
	}
	if w.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(w.MetricsAddr); err != nil {
			r.fail("METRICS_ADDR must be host:port, e.g. 127.0.0.1:9464")
		}
	}
	w.problems = r.problems
	return w
}

// Validate checks the web settings.
func (w Web) Validate() error { return errors.Join(w.problems...) }

func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an http(s) URL")
	}
	return nil
}
