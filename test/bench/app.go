package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"mentormemory/app"
	"mentormemory/config"
	"mentormemory/postgres"
)

// benchSecret signs the benchmark's tokens; the app verifies them with it,
// as it verifies Supabase's HS256 tokens in production.
const benchSecret = "bench-secret-that-is-at-least-32-characters-long"

// benchConfig is the app's configuration as cmd/server reads it from the
// environment, here a fixed one: the benchmark's database and token secret,
// plus model settings when given (without OPENAI_API_KEY, the offline
// summarizer). The facilitators' limits are far above what the benchmark
// asks of any of them, so every request is counted, as in production, and
// none is refused.
// The environment it is read from is returned too, for a server process.
func benchConfig(databaseURL string, model map[string]string) (config.Config, map[string]string, error) {
	env := map[string]string{"DATABASE_URL": databaseURL, "SUPABASE_JWT_SECRET": benchSecret}
	for _, limit := range []string{"READS_PER_MINUTE", "SEARCHES_PER_MINUTE", "WRITES_PER_MINUTE", "MODEL_REQUESTS_PER_MINUTE",
		"LEARNERS_PER_DAY", "TURNS_PER_DAY", "MODEL_CALLS_PER_DAY", "MODEL_TOKENS_PER_DAY"} {
		env["MENTOR_LIMIT_"+limit] = "1000000"
	}
	maps.Copy(env, model)
	cfg, err := config.FromEnv(func(name string) string { return env[name] })
	if err != nil {
		return cfg, nil, fmt.Errorf("configuration: %w", err)
	}
	return cfg, env, nil
}

// newApp builds the app in this process as cmd/server does: its garbage
// collector setting, app.New with its own pool, migrations first. It is the
// one place the benchmark builds the app.
func newApp(ctx context.Context, cfg config.Config, log *slog.Logger) (*app.App, error) {
	app.TuneGC(os.Getenv)
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	if _, err := postgres.Migrate(ctx, a.Pool); err != nil {
		a.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return a, nil
}

// servedApp is the real app serving on loopback, and a client for it.
type servedApp struct {
	app    *app.App
	base   string // http://127.0.0.1:port
	client *http.Client
	close  func()
}

// serveApp serves the app on 127.0.0.1, with its request log in serverLog.
// The client keeps up to conns connections open.
func serveApp(ctx context.Context, cfg config.Config, serverLog string, conns int) (*servedApp, error) {
	if err := os.MkdirAll(filepath.Dir(serverLog), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(serverLog)
	if err != nil {
		return nil, err
	}
	a, err := newApp(ctx, cfg, slog.New(slog.NewJSONHandler(logFile, nil)))
	if err != nil {
		logFile.Close()
		return nil, err
	}
	closeApp := func() {
		a.Close()
		logFile.Close()
	}

	// Loopback only, on a port the kernel picks; served as cmd/server
	// serves it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		closeApp()
		return nil, err
	}
	srv := a.HTTPServer(ln.Addr().String())
	go func() { _ = srv.Serve(ln) }()

	client := benchClient(conns)
	s := &servedApp{app: a, base: "http://" + ln.Addr().String(), client: client}
	s.close = func() {
		client.CloseIdleConnections()
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		closeApp()
	}
	if err := healthy(ctx, client, s.base); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// benchClient is the load generator's HTTP client: keep-alive connections,
// up to conns of them idle, never through a proxy, no compression: what is
// measured is the service, not the client.
func benchClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        2 * conns,
			MaxIdleConnsPerHost: 2 * conns,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
	}
}

func healthy(ctx context.Context, client *http.Client, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /healthz: status %d", resp.StatusCode)
	}
	return nil
}
