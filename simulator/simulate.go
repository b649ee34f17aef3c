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
	"github.com/jackc/pgx/v5"
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
	extract := app.NewExtractor(cfg.Model, log, nil)
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
	a, err := app.New(ctx, cfg, log, app.WithPool(pool), app.WithClock(clock.Now),
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

	// The database stamps what it stores with its own clock; what is learnt
	// is stamped again with the simulated one, so that consolidation sees
	// Thursday's "test on Friday" as said on Thursday.
	runJobs := func(ctx context.Context) error {
		var before time.Time
		if err := pool.QueryRow(ctx, `select now()`).Scan(&before); err != nil {
			return err
		}
		if err := runAll(ctx, a.Worker.RunOnce); err != nil {
			return err
		}
		_, err := pool.Exec(ctx, `update learner_memories
			set created_at = case when created_at >= $2 then $3 else created_at end, last_seen_at = $3
			where facilitator_id = $1::uuid and last_seen_at >= $2`, facilitator, before, clock.Now())
		return err
	}
	consolidate := func(ctx context.Context, name string, learnerID *string) error {
		return consolidateNow(ctx, a, pool, facilitator, name, learnerID, out, clock)
	}
	pipeline := Pipeline{Service: a.Service, RunJobs: runJobs, Consolidate: consolidate}
	if err := Run(ctx, pipeline, sessions, Options{Clock: clock, Out: out, SessionGap: SessionGap}); err != nil {
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

// consolidateNow runs, at once, the consolidation the end of a learner's
// session queued, and logs what it changed and the profile it rebuilt.
func consolidateNow(ctx context.Context, a *app.App, pool *pgxpool.Pool, facilitator, name string, learnerID *string,
	out io.Writer, clock *Clock) error {
	if learnerID == nil {
		return nil
	}
	// The opening just stored was made at the database's time; it is
	// stamped with the simulated one, as it would have been made then, so
	// that a day it names passes when the simulation's days do.
	if _, err := pool.Exec(ctx, `update session_openings set opening = jsonb_set(opening, '{computed_at}', to_jsonb($3::timestamptz))
		where facilitator_id = $1::uuid and learner_id = $2::uuid`, facilitator, *learnerID, clock.Now()); err != nil {
		return err
	}
	logf := func(tag, format string, args ...any) {
		fmt.Fprintf(out, "[%s] [%s] %s\n", clock.Now().Format("2006-01-02 15:04"), tag, fmt.Sprintf(format, args...))
	}
	if _, err := pool.Exec(ctx, `update memory_jobs set run_after = now()
		where facilitator_id = $1::uuid and kind = 'consolidate' and status = 'pending'`, facilitator); err != nil {
		return err
	}
	if err := runAll(ctx, a.Worker.RunConsolidationOnce); err != nil {
		return err
	}
	runs, err := a.Service.Consolidations(ctx, learnerID, 1)
	if err != nil || len(runs) == 0 {
		return err
	}
	r := runs[0]
	if r.Status != "done" {
		logf("CONSOLIDATION", "%s: run %s (%s)", name, r.Status, valueOf(r.Error))
		return nil
	}
	logf("CONSOLIDATION", "%s: %d memories in, %d out: expired %d, resolved %d, superseded %d, merged %d",
		name, valueOf(r.MemoriesIn), valueOf(r.MemoriesOut), r.Changes["expired"], r.Changes["resolved"],
		r.Changes["superseded"], r.Changes["merged"])
	rows, err := pool.Query(ctx, `select h.change, m.content from memory_history h
		join learner_memories m on m.facilitator_id = h.facilitator_id and m.id = h.memory_id
		join consolidation_runs r on r.facilitator_id = h.facilitator_id and r.job_id = h.job_id
		where h.facilitator_id = $1::uuid and r.id = $2::uuid and h.status_after <> 'current'
		order by h.id`, facilitator, r.ID)
	if err != nil {
		return err
	}
	changes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Change, Content string }])
	if err != nil {
		return err
	}
	for _, c := range changes {
		logf("CONSOLIDATION", "%s: %s: %s", name, c.Change, c.Content)
	}
	profile, err := a.Service.Profile(ctx, *learnerID)
	if err != nil {
		return err
	}
	logf("PROFILE", "%s: %d lines, %d tokens", name, len(profile.Lines), profile.Tokens)
	for _, c := range mentor.ProfileCategories {
		for _, l := range profile.Lines {
			if l.Category == c.Key {
				logf("PROFILE", "%s: %s: %s", name, c.Heading, l.Text)
			}
		}
	}
	logf("PROFILE", "%s: the last %d sessions, %d tokens", name, len(profile.Digest.Sessions), profile.Digest.Tokens)
	for _, l := range profile.Digest.Standing {
		logf("PROFILE", "%s: where things stand: %s", name, l)
	}
	for _, l := range profile.Digest.Themes {
		logf("PROFILE", "%s: what keeps coming back: %s", name, l)
	}
	return nil
}

func valueOf[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// runAll runs the jobs runOnce claims, one after another, until none is
// due.
func runAll(ctx context.Context, runOnce func(context.Context) (bool, error)) error {
	for {
		ran, err := runOnce(ctx)
		if err != nil || !ran {
			return err
		}
	}
}
