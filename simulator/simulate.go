package simulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app"
	"mentormemory/config"
	"mentormemory/extractor"
	"mentormemory/mentor"
)

// SessionGap is the simulated time between sessions: from a Thursday, the
// third session falls on a Friday.
const SessionGap = 96 * time.Hour

// Setup is what a simulation starts from besides the service's settings.
type Setup struct {
	Start time.Time // the simulated time of the first session
	Out   io.Writer // where the log goes
	// RecordTo, when set, is the file the model's extractions are written
	// to, as a fixture to replay later without a model key
	// (extractor.Recorder). It needs a model key.
	RecordTo string
}

// Simulate runs the sessions of dir through the service as cfg configures
// it (app.New, on pool), worker included, as a new facilitator created for
// the run, so that earlier runs and real users are never mixed in. With a
// model key the model extracts; without one the recorded fixture is
// replayed.
func Simulate(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, dir string, setup Setup) error {
	sessions, err := LoadDir(dir)
	if err != nil {
		return err
	}
	start, out := setup.Start, setup.Out
	clock := NewClock(start)
	log := slog.New(slog.DiscardHandler)
	extract := app.NewExtractor(cfg.Model, log)
	var recorder *extractor.Recorder
	if setup.RecordTo != "" {
		if extract == nil {
			return errors.New("recording extractions needs a model: set OPENAI_API_KEY")
		}
		recorder = extractor.NewRecorder(extract)
		extract = recorder
	}
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
	ctx = mentor.WithCaller(ctx, mentor.Caller{UserID: facilitator, Claims: claims})

	runJobs := func(ctx context.Context) error {
		for {
			ran, err := a.Worker.RunOnce(ctx)
			if err != nil || !ran {
				return err
			}
		}
	}
	if err := Run(ctx, Pipeline{Service: a.Service, RunJobs: runJobs}, sessions, Options{Clock: clock, Out: out, SessionGap: SessionGap}); err != nil {
		return err
	}
	if recorder == nil {
		return nil
	}
	if err := recorder.WriteFixture(setup.RecordTo); err != nil {
		return err
	}
	fmt.Fprintf(out, "[%s] [RECORDED] The model's extractions are in %s\n", clock.Now().Format("2006-01-02 15:04"), setup.RecordTo)
	return nil
}
