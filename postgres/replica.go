package postgres

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/mentor"
	"mentormemory/metrics"
)

// A read replica (DATABASE_REPLICA_URL) is a hot standby of the database,
// kept by streaming replication: the same database with the same roles and
// policies, only up to a moment behind. The reads that may be a moment
// behind go to it: search, recall, session openings, memory lists and
// exports (replicaReads). They run there exactly as on the primary, through
// read or inTx, as the caller under row-level security. Everything else,
// every write among them, stays on the primary.
//
// A read goes to the replica only when
//   - its last probe found it a standby that answers (Replica.probe),
//   - it cannot be further behind than the bound (DATABASE_REPLICA_MAX_LAG):
//     the lag that probe measured plus the time since, and
//   - it has replayed the caller's last write (read-your-writes: a
//     facilitator who has just posted finds the turns in a search);
//
// otherwise it goes to the primary; and a read that fails on the replica is
// read again on the primary, once.
//
// Read-your-writes: after each commit, the store asks the primary for its
// WAL position, which is past the commit's record, keeps it for the
// facilitator (noteWrite) and gives it to the request (mentor.Wrote), whose
// answer carries it to the client as a consistency token. A read of the
// facilitator's goes to the replica only once the replica's replay has
// reached both the position of their last write on this server process and
// the token the request brought (mentor.ReadAfter), which names a write
// made on any instance. A read whose request brings no token may miss
// another instance's writes for at most the bound, as it may anyone's.
//
// A token is only a floor, and the primary is always right: a token the
// replica has not reached sends the read to the primary. A token beyond
// any position the primary has reached names no write of this database (a
// database restored from a backup, a standby promoted before it received
// the write, a token made up): it is ignored, so that it cannot keep its
// holder's reads on the primary for good. Telling one from a write made
// since this process last saw the primary's position costs a round trip
// to the primary, and only when the replica has not reached the token.

// Replica is the hot standby the reads that may lag go to, and what is
// known of it: its health and lag as last probed, and the WAL position
// each facilitator's reads need it to have replayed.
type Replica struct {
	pool    *pgxpool.Pool // the standby
	primary *pgxpool.Pool
	maxLag  time.Duration
	every   time.Duration // between probes
	metrics *metrics.Metrics
	log     *slog.Logger
	stop    context.CancelFunc
	stopped chan struct{}

	mu sync.Mutex
	// up: the last probe found a standby that answers, and no read
	// failed there since.
	up bool
	// lag is how far behind the primary the last probe found the replay,
	// at probedAt.
	lag      time.Duration
	probedAt time.Time
	// replayed is how far the replica has replayed the WAL, as last seen;
	// a read needs it at or past the position the caller's last write
	// left the primary at.
	replayed uint64
	// primaryReached is the furthest position this process has seen the
	// primary at: a token beyond it needs the primary asked before it is
	// waited for.
	primaryReached uint64
	// writes holds, for each facilitator with a write this process made
	// that the replica may not have replayed yet, the primary's WAL
	// position after it. An entry leaves when the replica replays past
	// it, not after some time: forgetting it sooner would let a read miss
	// the write. At most maxNotedWrites entries; a write that finds the
	// map full raises floor instead, which every read needs: one
	// facilitator's write then sends everyone's reads to the primary for
	// a moment, rather than let the map grow without bound.
	writes map[string]uint64
	floor  uint64
	// unknownWrite: a write committed whose position could not be read
	// (the primary failed just after). Every read stays on the primary
	// until a probe that started after it (probes are numbered by
	// probeSeq; one numbered above unknownBefore) has read the primary's
	// position, which is past the write, and raised floor to it.
	unknownWrite  bool
	unknownBefore uint64
	probeSeq      uint64
}

// maxNotedWrites bounds Replica.writes: the facilitators writing within the
// moment the replica takes to replay, a few hundred bytes each.
const maxNotedWrites = 10_000

// How often the replica is probed: four times within the bound, so that a
// replica lagging past it stops answering soon, but at most every 50 ms and
// at least every second. A probe that takes longer than probeTimeout
// counts as failed.
const (
	minProbeInterval = 50 * time.Millisecond
	maxProbeInterval = time.Second
	probeTimeout     = 2 * time.Second
	// positionTimeout bounds reading a WAL position in a request: the
	// primary's after a write, the replica's when a read needs its replay
	// to be further than last seen.
	positionTimeout = time.Second
)

// The WAL positions, as bytes from the start. The primary's after a commit
// is its insert position, which is past the commit's record even when
// that record is not on disk yet; a probe compares the replica's replay
// with the primary's write position, which a replica that has caught up
// reaches.
const (
	primaryInsertPositionSQL = `select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint`
	primaryWritePositionSQL  = `select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint`
	replayPositionSQL        = `select coalesce(pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint, 0)`
	// replicaStateSQL: whether it is a standby at all, its replay
	// position, and the time since the primary committed the last
	// transaction it replayed (null: none since it started).
	replicaStateSQL = `select pg_is_in_recovery(),
		coalesce(pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint, 0),
		extract(epoch from now() - pg_last_xact_replay_timestamp())::float8`
)

// NewReplica watches the hot standby behind pool, a replica of primary's
// database, and probes it until Close. It answers reads once a probe finds
// it within maxLag of the primary. m counts where reads go (nil: nowhere).
func NewReplica(primary, pool *pgxpool.Pool, maxLag time.Duration, m *metrics.Metrics, log *slog.Logger) *Replica {
	ctx, stop := context.WithCancel(context.Background())
	r := &Replica{
		pool: pool, primary: primary, maxLag: maxLag,
		every:   min(max(maxLag/4, minProbeInterval), maxProbeInterval),
		metrics: m, log: log, stop: stop, stopped: make(chan struct{}),
		writes: map[string]uint64{},
	}
	go r.run(ctx)
	return r
}

// Close stops the probes; the pools are the caller's.
func (r *Replica) Close() {
	r.stop()
	<-r.stopped
}

func (r *Replica) run(ctx context.Context) {
	defer close(r.stopped)
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	for {
		r.probe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// probe reads the primary's WAL position, then the replica's state, and
// judges the replica by them: caught up when its replay has reached that
// position; else as far behind as the time since the primary committed the
// last transaction it replayed. The primary is asked first, so that a
// replay found past its position is past every commit made before the
// probe.
func (r *Replica) probe(ctx context.Context) {
	r.mu.Lock()
	r.probeSeq++
	seq := r.probeSeq
	r.mu.Unlock()

	probeCtx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var primaryAt, replayed int64
	var standby bool
	var sinceReplay *float64
	err := r.primary.QueryRow(probeCtx, primaryWritePositionSQL).Scan(&primaryAt)
	if err == nil {
		err = r.pool.QueryRow(probeCtx, replicaStateSQL).Scan(&standby, &replayed, &sinceReplay)
	}
	if ctx.Err() != nil {
		return // closing
	}
	var lag time.Duration
	switch {
	case err != nil:
	case !standby:
		err = errors.New("DATABASE_REPLICA_URL is not a standby (pg_is_in_recovery() is false)")
	case replayed >= primaryAt:
		lag = 0
	case sinceReplay == nil:
		err = errors.New("the standby has replayed no transaction since it started, so its lag is unknown")
	default:
		lag = max(time.Duration(*sinceReplay*float64(time.Second)), 0)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.outOfService("a probe of the read replica failed", err)
		r.metrics.ObserveReplica(false, r.lag)
		return
	}
	if !r.up {
		r.log.Info("the read replica is in service", "lag", lag)
	}
	r.up, r.lag, r.probedAt, r.replayed = true, lag, time.Now(), uint64(replayed)
	r.primaryReached = max(r.primaryReached, uint64(primaryAt))
	if r.unknownWrite && seq > r.unknownBefore {
		r.floor = max(r.floor, uint64(primaryAt))
		r.unknownWrite = false
	}
	for facilitator, at := range r.writes {
		if at <= r.replayed {
			delete(r.writes, facilitator)
		}
	}
	r.metrics.ObserveReplica(true, lag)
}

// outOfService takes the replica out of service until a probe finds it
// well again; r.mu is held.
func (r *Replica) outOfService(what string, err error) {
	if r.up {
		r.log.Warn(what+"; reads go to the primary until it answers", "err", err)
	}
	r.up = false
	// A replica that comes back may be another one, replayed less far.
	r.replayed = 0
}

// failed takes the replica out of service after a read failed there.
func (r *Replica) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outOfService("a read failed on the read replica and is read again on the primary", err)
}

// noteWrite keeps the primary's WAL position after a write of
// facilitator's just committed, for route, and returns it for the
// request's answer; false when it could not be read. It costs a round
// trip to the primary after each write, the price of knowing when the
// replica has it.
func (r *Replica) noteWrite(ctx context.Context, facilitator string) (uint64, bool) {
	// The write is committed: its note is taken even when the request is
	// cancelled now.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), positionTimeout)
	defer cancel()
	var at int64
	err := r.primary.QueryRow(ctx, primaryInsertPositionSQL).Scan(&at)

	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.unknownWrite, r.unknownBefore = true, r.probeSeq
		r.log.Warn("the primary's WAL position after a write could not be read; reads go to the primary until the next probe", "err", err)
		return 0, false
	}
	r.primaryReached = max(r.primaryReached, uint64(at))
	if _, noted := r.writes[facilitator]; noted || len(r.writes) < maxNotedWrites {
		r.writes[facilitator] = max(r.writes[facilitator], uint64(at))
	} else {
		r.floor = max(r.floor, uint64(at))
	}
	return uint64(at), true
}

// route says whether a read of facilitator's goes to the replica and, as
// metrics.ObserveRead counts it, why. token is the position the request's
// client has seen (mentor.ReadAfter; zero: none).
func (r *Replica) route(ctx context.Context, facilitator string, token uint64) (onReplica bool, reason string) {
	r.mu.Lock()
	up, unknownWrite := r.up, r.unknownWrite
	behind := r.lag + time.Since(r.probedAt)
	own := max(r.writes[facilitator], r.floor)
	replayed := r.replayed
	primaryReached := r.primaryReached
	r.mu.Unlock()
	switch {
	case !up:
		return false, metrics.ReplicaDown
	case behind > r.maxLag:
		return false, metrics.ReplicaLagging
	case unknownWrite:
		return false, metrics.OwnWrite
	case max(own, token) <= replayed:
		return true, metrics.ReplicaFresh
	}
	// The last probe saw the replay short of the caller's last write, but
	// it has probably gone further since: asking costs a round trip to the
	// replica, and saves the primary the read.
	replayed, err := r.replayPosition(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return false, metrics.ReplicaDown
	case err != nil:
		r.failed(err)
		return false, metrics.ReplicaDown
	case max(own, token) <= replayed:
		return true, metrics.ReplicaFresh
	case own > replayed:
		return false, metrics.OwnWrite
	case token <= primaryReached:
		return false, metrics.ConsistencyToken
	}
	// Only the token is ahead of the replay, and of all this process has
	// seen of the primary: it is either a write made since, on another
	// instance, or none at all. The primary says which.
	primaryAt, err := r.primaryPosition(ctx)
	switch {
	case err != nil:
		// The read goes to the primary, which answers it or fails it.
		return false, metrics.ConsistencyToken
	case token > primaryAt:
		return true, metrics.ReplicaFresh // no write of this database
	}
	return false, metrics.ConsistencyToken
}

// replayPosition asks the replica how far it has replayed, and keeps it.
func (r *Replica) replayPosition(ctx context.Context) (uint64, error) {
	return r.askPosition(ctx, r.pool, replayPositionSQL, &r.replayed)
}

// primaryPosition asks the primary how far its WAL goes (the insert
// position, as noteWrite reads it, which no write's position can be
// beyond), and keeps it.
func (r *Replica) primaryPosition(ctx context.Context) (uint64, error) {
	return r.askPosition(ctx, r.primary, primaryInsertPositionSQL, &r.primaryReached)
}

// askPosition reads a WAL position from db with sql, within
// positionTimeout, and raises *kept (guarded by r.mu) to it: positions
// only move forward, and an answer that raced an older one must not take
// the furthest seen back.
func (r *Replica) askPosition(ctx context.Context, db *pgxpool.Pool, sql string, kept *uint64) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, positionTimeout)
	defer cancel()
	var at int64
	if err := db.QueryRow(ctx, sql).Scan(&at); err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	*kept = max(*kept, uint64(at))
	return uint64(at), nil
}

// WithReplica has every write of s note where it left the primary's WAL
// for r, and returns s as the service is to use it: the reads that may be
// a moment behind (search, recall, session openings, memory lists,
// exports) go to r when it may answer them, and everything else is s's
// own, on the primary.
func (s *Store) WithReplica(r *Replica) mentor.Store {
	s.replica = r
	return replicaReads{s}
}

// replicaReads is the store that reads from the replica where it may.
type replicaReads struct{ *Store }

func (s replicaReads) Search(ctx context.Context, q mentor.SearchQuery) ([]mentor.SearchResult, error) {
	return fromReplica(ctx, s.Store, func(on *Store) ([]mentor.SearchResult, error) { return on.Search(ctx, q) }, nil)
}

func (s replicaReads) Recall(ctx context.Context, q mentor.RecallQuery) (mentor.Recall, error) {
	return fromReplica(ctx, s.Store, func(on *Store) (mentor.Recall, error) { return on.Recall(ctx, q) }, nil)
}

func (s replicaReads) Opening(ctx context.Context, learnerID *string) (*mentor.Opening, error) {
	return fromReplica(ctx, s.Store, func(on *Store) (*mentor.Opening, error) { return on.Opening(ctx, learnerID) }, nil)
}

func (s replicaReads) ListMemories(ctx context.Context, q mentor.ListQuery) ([]mentor.LearnerMemory, error) {
	return fromReplica(ctx, s.Store, func(on *Store) ([]mentor.LearnerMemory, error) { return on.ListMemories(ctx, q) }, nil)
}

// Export reads from one snapshot of the replica's. One that fails there is
// read again from the primary only while none of its records went out:
// the caller has no way to take them back.
func (s replicaReads) Export(ctx context.Context, learnerID *string, emit func(mentor.ExportRecord) error) error {
	sent := false
	_, err := fromReplica(ctx, s.Store, func(on *Store) (struct{}, error) {
		return struct{}{}, on.Export(ctx, learnerID, func(r mentor.ExportRecord) error {
			sent = true
			return emit(r)
		})
	}, func() bool { return !sent })
	return err
}

// fromReplica runs read on the replica when it may answer the caller
// (Replica.route), else on the primary, and counts which. A read the
// replica fails is run again on the primary, once, unless again says it
// cannot be (nil: it always can).
func fromReplica[T any](ctx context.Context, s *Store, read func(on *Store) (T, error), again func() bool) (T, error) {
	r := s.replica
	caller, ok := mentor.CallerFrom(ctx)
	if !ok {
		return read(s) // refused, as always
	}
	onReplica, reason := r.route(ctx, caller.UserID, uint64(mentor.ReadAfter(ctx)))
	if !onReplica {
		r.metrics.ObserveRead(metrics.ReadOnPrimary, reason)
		return read(s)
	}
	// The request's charge is a write, so the primary takes it, first: a
	// request refused reads nothing, as on the primary, and the read on the
	// replica finds the charge taken.
	if charge, charged := mentor.TakeRequestCharge(ctx); charged {
		if err := s.UseQuotas(ctx, charge); err != nil {
			var none T
			return none, err
		}
	}
	v, err := read(s.onReplica())
	if err == nil || !replicaFault(ctx, err) {
		r.metrics.ObserveRead(metrics.ReadOnReplica, reason)
		return v, err
	}
	r.failed(err)
	if again != nil && !again() {
		r.metrics.ObserveRead(metrics.ReadOnReplica, reason)
		return v, err
	}
	r.metrics.ObserveRead(metrics.ReadOnPrimary, metrics.ReplicaFailed)
	return read(s)
}

// onReplica is s reading from the replica: the same requests, as the same
// caller, through another pool.
func (s *Store) onReplica() *Store {
	on := *s
	on.pool = s.replica.pool
	on.replica = nil // nothing it does writes
	return &on
}

// replicaFault says whether a read failed on the replica because of the
// replica (unreachable, restarting, a read cancelled in a conflict with its
// replay: the server's errors) rather than because of the caller (a
// learner not found, a quota) or the request (cancelled, out of time),
// which the primary would answer the same.
func replicaFault(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	switch mentor.ErrorCode(err) {
	case mentor.CodeUnavailable, mentor.CodeInternal:
		return true
	}
	return false
}
