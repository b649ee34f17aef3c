package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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

func loadMemories(ctx context.Context, pool *pgxpool.Pool, m MemoryShape, workers, batchSize int) error {
	started := time.Now()
	if _, err := pool.Exec(ctx, memoryLearnersDDL); err != nil {
		return err
	}
	seconds, marked, err := finishedLoad(ctx, pool, m.String())
	if err != nil {
		return err
	}
	if marked {
		logf("memory data set %s already loaded (in %.1f s); reusing it", m, seconds)
		return nil
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
	l := &memoryLoader{pool: pool, shape: m, now: time.Now().UTC().Truncate(time.Second),
		progress: progress{of: "learners' memories", total: m.Learners}}
	if err := l.progress.load(ctx, batchSize, workers, l.loadBatch); err != nil {
		return err
	}

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
	if err := markLoaded(ctx, pool, m.String(), m.Learners, total, false); err != nil {
		return err
	}
	logf("memory data loaded in %.1f s", total.Seconds())
	return nil
}

type memoryLoader struct {
	pool     *pgxpool.Pool
	shape    MemoryShape
	now      time.Time
	progress progress
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

	err = copyBatch(ctx, l.pool, []tableCopy{
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
	}, nil)
	if err != nil {
		return err
	}
	l.progress.batchLoaded(len(indexes), len(b.memories), start, generated)
	return nil
}
