package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/postgres"
)

// Load runs the conversations' load, then the heavy tenants', then the
// memories'. Below it is what
// the two share: their bookkeeping in bench.loads, and batches loaded
// concurrently, each in one transaction.

// Load loads the data set c describes, skipping what is loaded already, so
// that a second load reuses the data. The connection must bypass row-level
// security (a superuser does): the loader writes every facilitator's rows.
func Load(ctx context.Context, c LoadConfig) error {
	if err := c.validate(); err != nil {
		return err
	}
	m := c.memories()
	pool, err := postgres.Open(ctx, c.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	var bypass bool
	if err := pool.QueryRow(ctx, `select rolsuper or rolbypassrls from pg_roles where rolname = current_user`).Scan(&bypass); err != nil {
		return err
	}
	if !bypass {
		return errors.New("the load needs a superuser (or BYPASSRLS) connection: it writes every facilitator's rows")
	}
	applied, err := postgres.Migrate(ctx, pool)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, v := range applied {
		logf("applied migration %s", v)
	}
	if _, err := pool.Exec(ctx, markerDDL); err != nil {
		return err
	}

	workers := max(1, c.Workers)
	if err := loadConversations(ctx, pool, c.Shape, workers, max(1, c.Batch)); err != nil {
		return err
	}
	if err := loadHeavyTenants(ctx, pool, c.Heavy, c.Shape.Seed); err != nil {
		return err
	}
	if m.PerLearner == 0 {
		return nil
	}
	// 50 learners (25,000 memories) per transaction.
	return loadMemories(ctx, pool, m, workers, 50)
}

// The loader's bookkeeping lives in its own schema, apart from the app's.
const markerDDL = `
create schema if not exists bench;
create table if not exists bench.loads (
	shape text primary key,
	facilitators integer not null,
	load_seconds float8 not null,
	resumed boolean not null,
	loaded_at timestamptz not null default now()
)`

// inBatches calls load with the indexes 0 to n-1, batchSize at a time, from
// workers goroutines, and stops at the first error.
func inBatches(ctx context.Context, n, batchSize, workers int, load func(context.Context, []int) error) error {
	batches := make(chan []int)
	errc := make(chan error, workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range batches {
				if err := load(ctx, b); err != nil {
					errc <- err
					cancel()
					return
				}
			}
		})
	}
feed:
	for start := 0; start < n; start += batchSize {
		b := make([]int, 0, batchSize)
		for i := start; i < min(start+batchSize, n); i++ {
			b = append(b, i)
		}
		select {
		case batches <- b:
		case <-ctx.Done():
			break feed
		}
	}
	close(batches)
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	return ctx.Err()
}

// finishedLoad returns how long the load of a data set took, or false when
// no load of it finished.
func finishedLoad(ctx context.Context, pool *pgxpool.Pool, shape string) (float64, bool, error) {
	var seconds float64
	err := pool.QueryRow(ctx, `select load_seconds from bench.loads where shape = $1`, shape).Scan(&seconds)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return seconds, err == nil, err
}

// markLoaded records a finished load of a data set of n facilitators or
// learners; resumed says it continued an interrupted one.
func markLoaded(ctx context.Context, pool *pgxpool.Pool, shape string, n int, took time.Duration, resumed bool) error {
	_, err := pool.Exec(ctx, `insert into bench.loads (shape, facilitators, load_seconds, resumed)
		values ($1, $2, $3, $4)
		on conflict (shape) do update set load_seconds = excluded.load_seconds,
			resumed = excluded.resumed, loaded_at = now()`,
		shape, n, took.Seconds(), resumed)
	return err
}

// tableCopy is a batch's rows of one table.
type tableCopy struct {
	table   pgx.Identifier
	columns []string
	rows    pgx.CopyFromSource
}

// copyBatch copies a batch's rows, table after table, then runs finish
// (when not nil), all in one transaction: a batch is either wholly loaded
// or not at all.
func copyBatch(ctx context.Context, pool *pgxpool.Pool, copies []tableCopy, finish func(pgx.Tx) error) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// Each batch is atomic and rerunnable, so waiting for the WAL flush at
	// every commit buys nothing here.
	if _, err := tx.Exec(ctx, `set local synchronous_commit = off`); err != nil {
		return err
	}
	for _, c := range copies {
		if _, err := tx.CopyFrom(ctx, c.table, c.columns, c.rows); err != nil {
			return fmt.Errorf("copy %s: %w", c.table.Sanitize(), err)
		}
	}
	if finish != nil {
		if err := finish(tx); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// progress counts what a load's batches loaded, for its log.
type progress struct {
	of    string // what the batches load: facilitators or learners
	total int
	done  atomic.Int64
	rows  atomic.Int64 // turns or memories copied
}

// load loads everything in batches (see inBatches) and logs the rows
// copied.
func (p *progress) load(ctx context.Context, batchSize, workers int, loadBatch func(context.Context, []int) error) error {
	start := time.Now()
	if err := inBatches(ctx, p.total, batchSize, workers, loadBatch); err != nil {
		return err
	}
	logf("%s: %d rows copied in %.1f s", p.of, p.rows.Load(), time.Since(start).Seconds())
	return nil
}

// batchLoaded counts a batch of n facilitators or learners, rows copied,
// and logs it with the time it took to generate and, since then, to copy.
func (p *progress) batchLoaded(n, rows int, start time.Time, generated time.Duration) {
	p.rows.Add(int64(rows))
	logf("loaded %4d/%d %s (%d rows in batch; generated in %.1f s, copied in %.1f s)",
		p.done.Add(int64(n)), p.total, p.of, rows, generated.Seconds(), (time.Since(start) - generated).Seconds())
}
