package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/memory"
	"mentormemory/postgres"
	"mentormemory/summarizer"
	"mentormemory/worker"
)

// SessionGap is the simulated time between sessions: from a Thursday, the
// third session falls on a Friday.
const SessionGap = 96 * time.Hour

// Config is what a simulation runs with. Without an Extractor the recorded
// fixture is replayed.
type Config struct {
	Summarizer memory.Summarizer
	Extractor  memory.Extractor
	Embedder   memory.Embedder
	Start      time.Time
	Out        io.Writer
}

// Simulate runs the sessions of dir through the real store, service and
// worker on pool, as a new facilitator created for the run, so that earlier
// runs and real users are never mixed in.
func Simulate(ctx context.Context, pool *pgxpool.Pool, dir string, cfg Config) error {
	sessions, err := LoadDir(dir)
	if err != nil {
		return err
	}
	clock := NewClock(cfg.Start)
	extract := cfg.Extractor
	if extract == nil {
		fixture, err := Fixture()
		if err != nil {
			return err
		}
		extract = fixture
		fmt.Fprintf(cfg.Out, "[%s] [SETUP] No model key: replaying the recorded extractions in %s\n",
			cfg.Start.Format("2006-01-02 15:04"), RecordedFixtureName)
	}
	semantic := "words only (no OPENAI_EMBEDDING_MODEL)"
	if cfg.Embedder != nil {
		semantic = "words and meaning (" + cfg.Embedder.Model() + ")"
	}
	fmt.Fprintf(cfg.Out, "[%s] [SETUP] Extractor: %s; summarizer: %s; recall by %s\n",
		cfg.Start.Format("2006-01-02 15:04"), extract.Name(), cfg.Summarizer.Name(), semantic)

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := postgres.NewStore(pool, 50).WithExtraction()
	if offline, ok := cfg.Summarizer.(*summarizer.Offline); ok {
		store.WithInlineSummarizer(offline)
	}
	svc := memory.NewService(store, cfg.Summarizer, log).WithEmbedder(cfg.Embedder)
	work := worker.New(store, worker.Config{
		Extractor: LoggingExtractor{Inner: extract, Out: cfg.Out, Clock: clock},
		Embedder:  cfg.Embedder,
	}, log)

	facilitator := uuid.NewString()
	if _, err := pool.Exec(ctx, `insert into auth.users (id, email) values ($1::uuid, $2)`,
		facilitator, "simulation-"+facilitator[:8]+"@example.invalid"); err != nil {
		return fmt.Errorf("create the simulation's facilitator: %w", err)
	}
	claims, _ := json.Marshal(map[string]string{"sub": facilitator, "role": "authenticated", "aud": "authenticated"})
	ctx = memory.WithCaller(ctx, memory.Caller{UserID: facilitator, Claims: claims})

	runJobs := func(ctx context.Context) error {
		for {
			ran, err := work.RunOnce(ctx)
			if err != nil || !ran {
				return err
			}
		}
	}
	return Run(ctx, Pipeline{Service: svc, RunJobs: runJobs}, sessions, Options{Clock: clock, Out: cfg.Out, SessionGap: SessionGap})
}
