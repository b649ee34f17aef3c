package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/memory"
	"mentormemory/postgres"
	"mentormemory/test/textgen"
)

// MemoryShape is the size of the learner memories, a data set of their
// own, loaded after the conversations and into their facilitators: the
// first learner of each of the first Learners facilitators gets PerLearner
// memories, a live session one exchange old, the ended session before it
// and the opening that session left. The conversations stay as they are.
type MemoryShape struct {
	conversations Shape
	Learners      int
	PerLearner    int
}

func (m MemoryShape) validate() error {
	if m.Learners < 1 || m.Learners > m.conversations.Facilitators || m.PerLearner < 1 || m.PerLearner > 5000 {
		return fmt.Errorf("memory data out of range: %d learners (1..%d facilitators) × %d memories (1..5000)",
			m.Learners, m.conversations.Facilitators, m.PerLearner)
	}
	return nil
}

// String names the data set in bench.loads; the prefix keeps it apart from
// the conversations' shapes.
func (m MemoryShape) String() string {
	return fmt.Sprintf("%s%s-l%d-m%d", memoryShapePrefix, m.conversations, m.Learners, m.PerLearner)
}

const memoryShapePrefix = "memories-"

// The run needs to know which learners have memories, their topic and the
// live session's message (to reset the session before measuring).
const memoryLearnersDDL = `
create table if not exists bench.memory_learners (
	learner_id uuid primary key,
	facilitator_id uuid not null,
	name text not null,
	topic text not null,
	last_message text not null
)`

func loadMemories(ctx context.Context, databaseURL string, m MemoryShape, workers, batchSize int) error {
	started := time.Now()
	pool, err := postgres.Open(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, markerDDL+";"+memoryLearnersDDL); err != nil {
		return err
	}
	var markedSeconds float64
	err = pool.QueryRow(ctx, `select load_seconds from bench.loads where shape = $1`, m.String()).Scan(&markedSeconds)
	if err == nil {
		logf("memory data set %s already loaded (in %.1f s); reusing it", m, markedSeconds)
		return nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}

	// Another memory shape, an interrupted load, or sessions the POST route
	// started: the benchmark users' memories and sessions go, so that the
	// load starts from none. (A load takes about a minute; resuming is not
	// worth the bookkeeping.)
	cleared := time.Now()
	var deleted int64
	for _, statement := range []string{
		`delete from bench.loads where shape like '` + memoryShapePrefix + `%'`,
		`delete from public.learner_memories m using auth.users u
			where u.id = m.facilitator_id and u.email like '%` + benchEmailDomain + `'`,
		`delete from public.mentor_sessions s using auth.users u
			where u.id = s.facilitator_id and u.email like '%` + benchEmailDomain + `'`,
		`truncate bench.memory_learners`,
	} {
		tag, err := pool.Exec(ctx, statement)
		if err != nil {
			return fmt.Errorf("clearing earlier memory data: %w", err)
		}
		deleted += tag.RowsAffected()
	}
	if deleted > 0 {
		// Without it the new rows would go after the dead ones, and the
		// table would be twice its size, with each learner's rows further
		// apart.
		if _, err := pool.Exec(ctx, `vacuum public.learner_memories, public.mentor_sessions, public.session_openings`); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		logf("cleared %d rows of earlier memory data in %.1f s", deleted, time.Since(cleared).Seconds())
	}

	logf("loading %s: %d learners × %d memories, a live session and an opening each, %d workers",
		m, m.Learners, m.PerLearner, workers)
	l := &memoryLoader{pool: pool, shape: m, now: time.Now().UTC().Truncate(time.Second)}
	if err := inBatches(ctx, m.Learners, batchSize, workers, l.loadBatch); err != nil {
		return err
	}
	copied := time.Since(started)
	logf("memory rows copied in %.1f s (%d memories); refreshing indexes and statistics", copied.Seconds(), l.memories.Load())

	analyzeStart := time.Now()
	if deleted > 0 {
		// The indexes keep the pages of the rows deleted above: rebuilt, they
		// are as large as after a first load.
		if _, err := pool.Exec(ctx, `reindex table public.learner_memories`); err != nil {
			return fmt.Errorf("reindex: %w", err)
		}
	}
	if _, err := pool.Exec(ctx, `vacuum (analyze) public.learner_memories, public.mentor_sessions, public.session_openings`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	logf("indexes and statistics refreshed in %.1f s", time.Since(analyzeStart).Seconds())

	total := time.Since(started)
	if _, err := pool.Exec(ctx, `insert into bench.loads (shape, facilitators, load_seconds, resumed)
		values ($1, $2, $3, false)
		on conflict (shape) do update set load_seconds = excluded.load_seconds, loaded_at = now()`,
		m.String(), m.Learners, total.Seconds()); err != nil {
		return err
	}
	logf("memory data loaded in %.1f s", total.Seconds())
	return nil
}

type memoryLoader struct {
	pool     *pgxpool.Pool
	shape    MemoryShape
	now      time.Time
	done     atomic.Int64
	memories atomic.Int64
}

// memoryBatch holds the rows of a few learners, copied in one transaction.
type memoryBatch struct {
	memories []memoryRow
	sessions [][]any
	openings [][]any
	learners [][]any
}

type memoryRow struct {
	id, facilitator, learner uuid.UUID
	genMemory
}

// benchLearner is a loaded learner the memories are about.
type benchLearner struct {
	facilitator, id uuid.UUID
	name, summary   string
}

func (l *memoryLoader) loadBatch(ctx context.Context, indexes []int) error {
	start := time.Now()
	ids := make([]string, len(indexes))
	for k, i := range indexes {
		ids[k] = learnerID(l.shape.conversations.facilitatorID(i), 0).String()
	}
	// The opening quotes the conversation's summary, as the app's does.
	rows, err := l.pool.Query(ctx, `select l.facilitator_id, l.id, l.name, coalesce(c.summary, '')
		from public.learners l
		left join public.conversation_updates c on c.facilitator_id = l.facilitator_id and c.learner_id = l.id
		where l.id = any($1::uuid[])`, ids)
	if err != nil {
		return err
	}
	found := map[uuid.UUID]benchLearner{}
	var bl benchLearner
	if _, err := pgx.ForEachRow(rows, []any{&bl.facilitator, &bl.id, &bl.name, &bl.summary}, func() error {
		found[bl.id] = bl
		return nil
	}); err != nil {
		return err
	}
	if len(found) != len(ids) {
		return fmt.Errorf("found %d of the %d learners of facilitators %d–%d: load the conversations first",
			len(found), len(ids), indexes[0], indexes[len(indexes)-1])
	}

	var b memoryBatch
	for _, i := range indexes {
		l.generate(&b, i, found[learnerID(l.shape.conversations.facilitatorID(i), 0)])
	}
	// Memories are learnt over the year, across all learners at once: in
	// that order they would lie in the heap.
	slices.SortStableFunc(b.memories, func(x, y memoryRow) int { return x.created.Compare(y.created) })
	generated := time.Since(start)

	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `set local synchronous_commit = off`); err != nil {
		return err
	}
	for _, c := range []struct {
		table   pgx.Identifier
		columns []string
		rows    pgx.CopyFromSource
	}{
		// search_vector is generated; embedding stays null: the benchmark has
		// no embedding model.
		{pgx.Identifier{"public", "learner_memories"},
			[]string{"id", "facilitator_id", "learner_id", "type", "content", "importance", "confidence", "metadata",
				"source", "mentions", "created_at", "updated_at", "last_seen_at"},
			pgx.CopyFromSlice(len(b.memories), func(i int) ([]any, error) {
				m := &b.memories[i]
				return []any{m.id, m.facilitator, m.learner, string(m.typ), m.content, m.importance, m.confidence,
					mustJSON(m.metadata), m.source, m.mentions, m.created, m.lastSeen, m.lastSeen}, nil
			})},
		// Sessions before openings, which point at them.
		{pgx.Identifier{"public", "mentor_sessions"},
			[]string{"id", "facilitator_id", "learner_id", "started_at", "last_activity_at", "ended_at", "end_reason",
				"exchanges", "last_message", "closing"},
			pgx.CopyFromRows(b.sessions)},
		{pgx.Identifier{"public", "session_openings"},
			[]string{"facilitator_id", "learner_id", "session_id", "opening", "computed_at"},
			pgx.CopyFromRows(b.openings)},
		{pgx.Identifier{"bench", "memory_learners"},
			[]string{"learner_id", "facilitator_id", "name", "topic", "last_message"},
			pgx.CopyFromRows(b.learners)},
	} {
		if _, err := tx.CopyFrom(ctx, c.table, c.columns, c.rows); err != nil {
			return fmt.Errorf("copy %s: %w", c.table.Sanitize(), err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	l.memories.Add(int64(len(b.memories)))
	done := l.done.Add(int64(len(indexes)))
	logf("loaded memories of %4d/%d learners (%d rows in batch; generated in %.1f s, copied in %.1f s)",
		done, l.shape.Learners, len(b.memories), generated.Seconds(), (time.Since(start) - generated).Seconds())
	return nil
}

// memoryStream keeps the memory generator's random streams apart from the
// conversations' (which use the facilitator's index as the stream).
const memoryStream = 1 << 40

// generate appends learner i's rows: the memories, the session that ended
// a few days ago with the opening it left, and the live session, one
// exchange old, about the learner's topic.
func (l *memoryLoader) generate(b *memoryBatch, i int, learner benchLearner) {
	r := rand.New(rand.NewPCG(l.shape.conversations.Seed, memoryStream+uint64(i)))
	g := newMemoryGen(r, learner.name)
	known := make([]memory.LearnerMemory, 0, l.shape.PerLearner)
	for range l.shape.PerLearner {
		m := g.memory(l.now)
		id := randomUUID(r)
		b.memories = append(b.memories, memoryRow{id, learner.facilitator, learner.id, m})
		if m.typ == memory.Personal || m.typ == memory.Context {
			known = append(known, memory.LearnerMemory{ID: id.String(), Type: m.typ, Content: m.content,
				Importance: float64(m.importance), Metadata: m.metadata, LastSeenAt: m.lastSeen})
		}
	}

	// The opening is built as the app builds it when a session ends (see
	// postgres.storeOpening): from the closing state, the summary and the
	// best personal and context memories.
	day := 24 * time.Hour
	pastStart := l.now.Add(-time.Duration(1+r.IntN(10))*day - time.Duration(r.IntN(12))*time.Hour)
	past := g.pastSession(pastStart, 3+r.IntN(6))
	pastID := randomUUID(r)
	closing := memory.AdvanceClosing(memory.ClosingState{SessionID: pastID.String()}, past, learner.name)
	ended := past[len(past)-1].CreatedAt.Add(memory.SessionIdleLimit)
	slices.SortStableFunc(known, func(x, y memory.LearnerMemory) int {
		if c := cmp.Compare(y.Importance, x.Importance); c != 0 {
			return c
		}
		return y.LastSeenAt.Compare(x.LastSeenAt)
	})
	opening := memory.BuildOpening(closing, learner.summary, known[:min(len(known), openingMemories)], learner.name, ended)
	learnerText := learner.id.String()
	opening.LearnerID = &learnerText

	message := g.liveMessage()
	liveStart := l.now.Add(-time.Duration(1+r.IntN(10)) * time.Minute)
	live := []memory.Turn{
		{Role: memory.RoleUser, Content: message, CreatedAt: liveStart},
		{Role: memory.RoleAssistant, Content: g.fill(textgen.Pick(r, pastMentorLines), nil), CreatedAt: liveStart.Add(time.Minute)},
	}
	liveID := randomUUID(r)
	liveClosing := memory.AdvanceClosing(memory.ClosingState{SessionID: liveID.String()}, live, learner.name)

	b.sessions = append(b.sessions,
		[]any{pastID, learner.facilitator, learner.id, pastStart, past[len(past)-1].CreatedAt, ended, memory.EndedIdle,
			closing.Exchanges, past[len(past)-2].Content, mustJSON(closing)},
		[]any{liveID, learner.facilitator, learner.id, liveStart, liveStart.Add(time.Minute), nil, nil,
			liveClosing.Exchanges, message, mustJSON(liveClosing)})
	b.openings = append(b.openings, []any{learner.facilitator, learner.id, pastID, mustJSON(opening), ended})
	b.learners = append(b.learners, []any{learner.id, learner.facilitator, learner.name, g.topic(), message})
}

// openingMemories is how many memories the app builds an opening from
// (postgres.openingMemories).
const openingMemories = 30
