package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/mentor"
	"mentormemory/summarizer"
)

// Shape is the size of the data set.
type Shape struct {
	Facilitators    int
	Archives        int // archived conversations per facilitator
	TurnsPerArchive int
	ActiveTurns     int // average active turns per live conversation
	Seed            uint64
}

func (s Shape) validate() error {
	if s.Facilitators < 1 || s.Facilitators > 100_000 || s.Archives < 0 || s.Archives > 10_000 ||
		s.TurnsPerArchive < 1 || s.TurnsPerArchive > 500 || s.ActiveTurns < 2 || s.ActiveTurns > 48 {
		return fmt.Errorf("data shape out of range: %+v (active turns 2..48, below the archive limit of 50)", s)
	}
	return nil
}

func (s Shape) String() string {
	return fmt.Sprintf("f%d-a%d-t%d-x%d-s%d", s.Facilitators, s.Archives, s.TurnsPerArchive, s.ActiveTurns, s.Seed)
}

// benchEmailDomain marks the benchmark's users, so they are never confused
// with anyone else's on a shared database.
const benchEmailDomain = "@bench.invalid"

// benchNamespace derives the facilitators' and learners' ids. Ids that
// depend only on what shapes a facilitator's rows (not on how many
// facilitators there are) make the load resumable and extendable: a batch is
// loaded exactly when its users exist.
var benchNamespace = uuid.MustParse("6d1c3f0e-9b7a-4c52-8f0e-2a4b5c6d7e8f")

func (s Shape) facilitatorID(i int) uuid.UUID {
	return uuid.NewSHA1(benchNamespace, fmt.Appendf(nil, "facilitator/%d/%d/%d/%d/%d",
		s.Seed, s.Archives, s.TurnsPerArchive, s.ActiveTurns, i))
}

// tenant is one facilitator as generate writes them: the user's id and
// email, how many learners they have, and the random stream their rows
// come from.
type tenant struct {
	id       uuid.UUID
	email    string
	learners int
	stream   uint64
}

// tenant is facilitator i of the data set: a parent or teacher with two
// learners.
func (s Shape) tenant(i int) tenant {
	return tenant{id: s.facilitatorID(i), email: fmt.Sprintf("bench-%05d%s", i, benchEmailDomain), learners: 2, stream: uint64(i)}
}

func learnerID(facilitator uuid.UUID, k int) uuid.UUID {
	return uuid.NewSHA1(facilitator, fmt.Appendf(nil, "learner/%d", k))
}

// randomUUID is a version 4 uuid from the facilitator's stream, so reloads
// produce the same rows.
func randomUUID(r *rand.Rand) uuid.UUID {
	var u uuid.UUID
	for i := 0; i < 16; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			u[i+j] = byte(v >> (8 * j))
		}
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

func loadConversations(ctx context.Context, pool *pgxpool.Pool, s Shape, workers, batchSize int) error {
	started := time.Now()
	ids := make([]uuid.UUID, s.Facilitators)
	for i := range ids {
		ids[i] = s.facilitatorID(i)
	}
	if err := dropOtherShapes(ctx, pool, ids); err != nil {
		return err
	}

	var loadedBefore int
	if err := pool.QueryRow(ctx, `select count(*) from auth.users where id = any($1::uuid[])`, uuidStrings(ids)).Scan(&loadedBefore); err != nil {
		return err
	}
	markedSeconds, marked, err := finishedLoad(ctx, pool, s.String())
	if err != nil {
		return err
	}
	if marked && loadedBefore == s.Facilitators {
		logf("data set %s already loaded (in %.1f s); reusing it", s, markedSeconds)
		return nil
	}
	if loadedBefore > 0 {
		logf("resuming: %d of %d facilitators already loaded", loadedBefore, s.Facilitators)
	}
	logf("loading %s: %d facilitators × %d archived conversations × %d turns, %d workers",
		s, s.Facilitators, s.Archives, s.TurnsPerArchive, workers)

	l := &loader{pool: pool, shape: s, now: time.Now().UTC().Truncate(time.Second), summarizer: summarizer.NewOffline(),
		progress: progress{of: "facilitators", total: s.Facilitators}}
	if err := l.progress.load(ctx, batchSize, workers, l.loadBatch); err != nil {
		return err
	}

	// Fresh statistics, so the planner sees 100k archive rows and not an
	// empty table; and a vacuum, so the pages are all-visible with hint bits
	// set, as in a database that grew to this size over months, and
	// autovacuum does not start on a million new rows during the measuring.
	analyzeStart := time.Now()
	if _, err := pool.Exec(ctx, `vacuum (analyze)`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	logf("VACUUM (ANALYZE) took %.1f s", time.Since(analyzeStart).Seconds())

	// The statement trigger on conversation_turns fills search_vocabulary;
	// COPY fires it with the transition table, which is checked here
	// because search's misspelling correction depends on it.
	var vocab int
	if err := pool.QueryRow(ctx, `select count(*) from public.search_vocabulary where facilitator_id = $1::uuid`, ids[0].String()).Scan(&vocab); err != nil {
		return err
	}
	if vocab == 0 {
		return errors.New("search_vocabulary is empty after the load: the collect_words trigger did not fire")
	}
	logf("search_vocabulary filled by the trigger: %d words for the first facilitator", vocab)

	total := time.Since(started)
	if err := markLoaded(ctx, pool, s.String(), s.Facilitators, total, loadedBefore > 0); err != nil {
		return err
	}
	logf("loaded in %.1f s", total.Seconds())
	return nil
}

// dropOtherShapes deletes the benchmark users of a differently shaped data
// set (another seed or size), so that the run measures one data set. Only
// the data set's users (bench-N with the benchmark's email domain) are
// touched, not the heavy tenants beside it; their rows go with them by
// cascade.
func dropOtherShapes(ctx context.Context, pool *pgxpool.Pool, ids []uuid.UUID) error {
	var others int
	if err := pool.QueryRow(ctx, `select count(*) from auth.users
		where email like 'bench-%' || $2 and not (id = any($1::uuid[]))`, uuidStrings(ids), benchEmailDomain).Scan(&others); err != nil {
		return err
	}
	if others == 0 {
		return nil
	}
	logf("deleting %d benchmark facilitators of another data shape", others)
	if _, err := pool.Exec(ctx, `delete from auth.users where email like 'bench-%' || $2 and not (id = any($1::uuid[]))`,
		uuidStrings(ids), benchEmailDomain); err != nil {
		return err
	}
	_, err := pool.Exec(ctx, `delete from bench.loads where shape not like $1 || '%'`, heavyShapePrefix)
	return err
}

type loader struct {
	pool       *pgxpool.Pool
	shape      Shape
	now        time.Time
	summarizer *summarizer.Offline
	progress   progress
	// heavy, when set, is the one facilitator this loader writes instead
	// of the shape's (see heavy.go).
	heavy *heavyTenant
}

// tenant is the facilitator of index i this loader writes.
func (l *loader) tenant(i int) tenant {
	if l.heavy != nil {
		return l.heavy.tenant()
	}
	return l.shape.tenant(i)
}

// batch holds the rows of a few facilitators, copied in one transaction so
// that a batch is either wholly loaded or not at all.
type batch struct {
	ids      []uuid.UUID
	users    [][]any
	learners [][]any
	archives [][]any
	turns    []turnRow
	convs    [][]any
}

type turnRow struct {
	facilitator uuid.UUID
	learner     any // uuid.UUID, or nil for the general conversation
	archive     any // uuid.UUID, or nil for an active turn
	role        string
	content     string
	clientID    string
	at          time.Time
}

func (l *loader) loadBatch(ctx context.Context, facilitators []int) error {
	ids := make([]uuid.UUID, len(facilitators))
	for k, i := range facilitators {
		ids[k] = l.tenant(i).id
	}
	var present int
	if err := l.pool.QueryRow(ctx, `select count(*) from auth.users where id = any($1::uuid[])`, uuidStrings(ids)).Scan(&present); err != nil {
		return err
	}
	switch present {
	case len(ids):
		l.progress.done.Add(int64(len(ids)))
		return nil // loaded by an earlier run
	case 0:
	default:
		return fmt.Errorf("facilitators %d–%d are partly loaded, which a batch transaction cannot leave; drop the database",
			facilitators[0], facilitators[len(facilitators)-1])
	}

	start := time.Now()
	var b batch
	for _, i := range facilitators {
		l.generate(ctx, &b, i)
	}
	// The log is in arrival order: the batch's facilitators talked at the
	// same time, so their turns interleave in the heap as they would live.
	slices.SortStableFunc(b.turns, func(x, y turnRow) int { return x.at.Compare(y.at) })
	generated := time.Since(start)

	if err := l.insert(ctx, &b); err != nil {
		return fmt.Errorf("batch %d–%d: %w", facilitators[0], facilitators[len(facilitators)-1], err)
	}
	l.progress.batchLoaded(len(ids), len(b.turns), start, generated)
	return nil
}

func (l *loader) insert(ctx context.Context, b *batch) error {
	return copyBatch(ctx, l.pool, []tableCopy{
		{pgx.Identifier{"auth", "users"},
			[]string{"id", "aud", "role", "email", "email_confirmed_at", "created_at", "updated_at"},
			pgx.CopyFromRows(b.users)},
		{pgx.Identifier{"public", "learners"},
			[]string{"facilitator_id", "id", "name", "created_at"},
			pgx.CopyFromRows(b.learners)},
		// search_vector is generated from summary and turns by Postgres.
		{pgx.Identifier{"public", "conversation_history_archive"},
			[]string{"id", "facilitator_id", "learner_id", "summary", "conversation_turns", "turn_count", "archived_at"},
			pgx.CopyFromRows(b.archives)},
		// id comes from the identity, content_vector is generated, and the
		// collect_words statement trigger fills search_vocabulary.
		{pgx.Identifier{"public", "conversation_turns"},
			[]string{"facilitator_id", "learner_id", "archive_id", "role", "content", "client_turn_id", "created_at"},
			pgx.CopyFromSlice(len(b.turns), func(i int) ([]any, error) {
				t := &b.turns[i]
				return []any{t.facilitator, t.learner, t.archive, t.role, t.content, t.clientID, t.at}, nil
			})},
		// After the turns: the insert trigger computes search_vector from the
		// active turns.
		{pgx.Identifier{"public", "conversation_updates"},
			[]string{"id", "facilitator_id", "learner_id", "summary", "recent_turns", "turn_count", "created_at", "updated_at"},
			pgx.CopyFromRows(b.convs)},
	}, func(tx pgx.Tx) error {
		// The summaries cover every active turn, as after a successful
		// update; left at 0, the first post would re-summarize the whole
		// turn log. The active turns' words, bytes and time span are what
		// the posts would have left (as the archiving trigger recomputes
		// them): search reads the words and the span.
		_, err := tx.Exec(ctx, `update public.conversation_updates c
			set summarized_turn_id = m.last_id, turns_vector = m.words, turns_bytes = m.bytes,
				first_turn_at = m.first_at, last_turn_at = m.last_at
			from (select facilitator_id, learner_id, max(id) as last_id,
					to_tsvector('english', string_agg(content, ' ' order by id)) as words,
					sum(octet_length(content)) as bytes, min(created_at) as first_at, max(created_at) as last_at
				from public.conversation_turns
				where facilitator_id = any($1::uuid[]) and archive_id is null
				group by facilitator_id, learner_id) m
			where c.facilitator_id = m.facilitator_id and c.learner_id is not distinct from m.learner_id`, uuidStrings(b.ids))
		if err != nil {
			return err
		}
		// The archives hold their turns by link, as archiving did before
		// migration 0037; each gets its range of turns, as archiving now
		// writes and as migration 0055 gave the archives already stored,
		// so the active turns are found from the highest range.
		_, err = tx.Exec(ctx, `select private.range_linked_archives($1::uuid[])`, uuidStrings(b.ids))
		return err
	})
}

// scope is one of a facilitator's conversations: general or a learner's.
type scope struct {
	learner any // uuid.UUID or nil
	name    string
	age     int
	first   time.Time // when the conversation began
}

// archivedTurn is the archive's JSON form of a turn, as
// archive_oldest_turns writes it.
type archivedTurn struct {
	ID        string    `json:"id,omitempty"`
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
}

// generate appends facilitator i's rows: the user, their learners, the
// archived conversations spread over the past year, and an active
// conversation per scope from the last few days.
func (l *loader) generate(ctx context.Context, b *batch, i int) {
	s := l.shape
	who := l.tenant(i)
	r := rand.New(rand.NewPCG(s.Seed, who.stream))
	g := &textGen{r: r}
	fid := who.id
	day := 24 * time.Hour
	joined := l.now.Add(-time.Duration(380+r.IntN(60)) * day)
	b.ids = append(b.ids, fid)
	b.users = append(b.users, []any{fid, "authenticated", "authenticated", who.email, joined, joined, joined})

	scopes := []*scope{{first: l.now}}
	for k, n := range learnerNameIndexes(r, who.learners) {
		id := learnerID(fid, k)
		created := joined.Add(time.Duration(k+1) * time.Hour)
		b.learners = append(b.learners, []any{fid, id, learnerNames[n], created})
		scopes = append(scopes, &scope{learner: id, name: learnerNames[n], age: 5 + r.IntN(11), first: l.now})
	}
	scopes[0].age = 5 + r.IntN(11)

	// Archived conversations start anywhere in the past year up to a week
	// ago, 40% general and the rest spread over the learners: two learners
	// get 30% each, a class's learners are drawn evenly.
	starts := make([]time.Time, s.Archives)
	for k := range starts {
		starts[k] = l.now.Add(-7*day - time.Duration(r.Int64N(int64(358*day))))
	}
	slices.SortFunc(starts, time.Time.Compare)
	for _, start := range starts {
		sc := scopes[0]
		if p := r.IntN(10); p >= 4 {
			k := (p - 4) / 3
			if who.learners > 2 {
				k = r.IntN(who.learners)
			}
			sc = scopes[1+k]
		}
		if start.Before(sc.first) {
			sc.first = start
		}
		t := g.newTopic()
		archiveID := randomUUID(r)
		turns := l.conversation(g, r, t, sc, start, s.TurnsPerArchive)
		jsonTurns := make([]archivedTurn, len(turns))
		for k, turn := range turns {
			jsonTurns[k] = archivedTurn(turn)
			b.turns = append(b.turns, turnRow{fid, sc.learner, archiveID, turn.Role, turn.Content, turn.ID, turn.CreatedAt})
		}
		archived := turns[len(turns)-1].CreatedAt.Add(time.Duration(5+r.IntN(60)) * time.Second)
		b.archives = append(b.archives, []any{archiveID, fid, sc.learner, l.summarize(ctx, turns, sc.name),
			mustJSON(jsonTurns), len(turns), archived})
	}

	// Each scope's live conversation, from the last three days: an even
	// number of turns (they are posted two at a time) around the average.
	for _, sc := range scopes {
		n := s.ActiveTurns + 2*(r.IntN(5)-2)
		n = max(2, min(n, 48)) &^ 1
		start := l.now.Add(-time.Duration(r.Int64N(int64(3 * day))))
		t := g.newTopic()
		turns := l.conversation(g, r, t, sc, start, n)
		for _, turn := range turns {
			b.turns = append(b.turns, turnRow{fid, sc.learner, nil, turn.Role, turn.Content, turn.ID, turn.CreatedAt})
		}
		recent := turns[max(0, len(turns)-10):]
		created := sc.first
		if start.Before(created) {
			created = start
		}
		b.convs = append(b.convs, []any{randomUUID(r), fid, sc.learner, l.summarize(ctx, turns, sc.name),
			mustJSON(recent), len(turns), created, turns[len(turns)-1].CreatedAt})
	}
}

// learnerNameIndexes picks n (2 or more) different names from
// learnerNames: the first at random, the second any other, and for a
// class the rest in random order. Two learners draw what they always
// drew, so the data set stays the same.
func learnerNameIndexes(r *rand.Rand, n int) []int {
	first := r.IntN(len(learnerNames))
	second := (first + 1 + r.IntN(len(learnerNames)-1)) % len(learnerNames)
	picked := []int{first, second}
	if n <= 2 {
		return picked
	}
	for _, k := range r.Perm(len(learnerNames)) {
		if k != first && k != second && len(picked) < n {
			picked = append(picked, k)
		}
	}
	return picked
}

// conversation writes n alternating turns, parent first, a reply every
// half minute to four minutes.
func (l *loader) conversation(g *textGen, r *rand.Rand, t topic, sc *scope, start time.Time, n int) []mentor.Turn {
	turns := make([]mentor.Turn, n)
	at := start
	for k := range turns {
		role := mentor.RoleUser
		if k%2 == 1 {
			role = mentor.RoleAssistant
		}
		at = at.Add(time.Duration(20+r.IntN(220)) * time.Second)
		turns[k] = mentor.Turn{ID: randomUUID(r).String(), Role: role, Content: g.turn(role, t, sc.name, sc.age), CreatedAt: at}
	}
	return turns
}

// summarize writes the summary the service itself would have written, with
// its offline summarizer, so summaries (weight A in search) have the real
// length and wording.
func (l *loader) summarize(ctx context.Context, turns []mentor.Turn, learnerName string) string {
	summary, err := l.summarizer.Summarize(ctx, mentor.SummaryRequest{Turns: turns, LearnerName: learnerName})
	if err != nil {
		panic(err) // the offline summarizer never fails
	}
	return summary
}

// uuidStrings passes uuids as text: the pool's exec mode sends parameters
// without asking the server their types, and a uuid[] cast in the SQL then
// reads them.
func uuidStrings(ids []uuid.UUID) []string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return s
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
