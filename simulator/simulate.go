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

	"mentormemory/app"
	"mentormemory/config"
	"mentormemory/memory"
)

// SessionGap is the simulated time between sessions: from a Thursday, the
// third session falls on a Friday.
const SessionGap = 96 * time.Hour

// Simulate runs the sessions of dir through the service as cfg configures
// it (app.New, on pool), worker included, as a new facilitator created for
// the run, so that earlier runs and real users are never mixed in. The
// first session starts at start. With a model key the model extracts;
// without one the recorded fixture is replayed.
func Simulate(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, dir string, start time.Time, out io.Writer) error {
	sessions, err := LoadDir(dir)
	if err != nil {
		return err
	}
	clock := NewClock(start)
	log := slog.New(slog.DiscardHandler)
	extract := app.NewExtractor(cfg.Model, log)
	if extract == nil {
		fixture, err := Fixture()
		if err != nil {
			return err
		}
		extract = fixture
		fmt.Fprintf(out, "[%s] [SETUP] No model key: replaying the recorded extractions in %s\n",
			start.Format("2006-01-02 15:04"), RecordedFixtureName)
	}
	a, err := app.New(ctx, cfg, log, app.WithPool(pool),
		app.WithExtractor(LoggingExtractor{Inner: extract, Out: out, Clock: clock}))
	if err != nil {
		return err
	}
	defer a.Close()
	semantic := "words only (no OPENAI_EMBEDDING_MODEL)"
	if cfg.Model.EmbeddingConfigured() {
		semantic = "words and meaning (" + cfg.Model.Embedding.Model + ")"
	}
	fmt.Fprintf(out, "[%s] [SETUP] Extractor: %s; summarizer: %s; recall by %s\n",
		start.Format("2006-01-02 15:04"), extract.Name(), a.Service.SummarizerName(), semantic)

	facilitator := uuid.NewString()
	if _, err := pool.Exec(ctx, `insert into auth.users (id, email) values ($1::uuid, $2)`,
		facilitator, "simulation-"+facilitator[:8]+"@example.invalid"); err != nil {
		return fmt.Errorf("create the simulation's facilitator: %w", err)
	}
	claims, _ := json.Marshal(map[string]string{"sub": facilitator, "role": "authenticated", "aud": "authenticated"})
	ctx = memory.WithCaller(ctx, memory.Caller{UserID: facilitator, Claims: claims})

	runJobs := func(ctx context.Context) error {
		for {
			ran, err := a.Worker.RunOnce(ctx)
			if err != nil || !ran {
				return err
			}
		}
	}
	return Run(ctx, Pipeline{Service: a.Service, RunJobs: runJobs}, sessions, Options{Clock: clock, Out: out, SessionGap: SessionGap})
}
