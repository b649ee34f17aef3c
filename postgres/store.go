// Package postgres is the memory's Postgres adapter. Every request's
// statements run in one transaction as role memory_service with the caller's
// verified claims, so row-level security in the database, not this code, is
// what keeps facilitators apart.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/mentor"
)

// Open connects a pool. Statements are prepared once per connection and
// their plans reused (pgx's cache_statement mode): planning is a fifth to a
// third of what recall and search cost. A transaction pooler (pgbouncer,
// Supavisor in transaction mode) cannot keep prepared statements between
// transactions, so through Supabase's (port 6543) statements run in exec
// mode, unnamed and planned each time; the URL's default_query_exec_mode
// decides when set, for any other pooler.
func Open(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(databaseURL, "default_query_exec_mode") {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
		if cfg.ConnConfig.Port == supabaseTransactionPoolerPort {
			cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
		}
	}
	// Without a limit, connecting to a host that drops packets waits for the
	// operating system's TCP timeout, minutes.
	if !strings.Contains(databaseURL, "connect_timeout") {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	return pgxpool.NewWithConfig(ctx, cfg)
}

// connectTimeout bounds opening a connection unless the URL sets
// connect_timeout; DefaultTxTimeout bounds each request's transaction,
// waiting for a connection included. Within it, no statement of a request
// runs longer than statementTimeout, and none waits longer than DefaultLockTimeout
// for a row another request holds (posts to one conversation take turns in
// the server before they take a connection, mentor.LimitPerFacilitator, so
// this wait is for another server instance's post): either answers a 503
// the client retries, and frees the connection for everyone else long
// before the transaction's own limit.
const (
	supabaseTransactionPoolerPort = 6543

	connectTimeout     = 5 * time.Second
	DefaultTxTimeout   = 15 * time.Second
	statementTimeout   = "5s"
	DefaultLockTimeout = 3 * time.Second
)

// Store implements mentor.Store.
type Store struct {
	pool         *pgxpool.Pool
	archiveTurns string
	// txTimeout bounds every transaction run for a request: a database that
	// stops answering (a frozen host, a network partition) then costs a
	// request a 503 after txTimeout instead of hanging it.
	txTimeout time.Duration
	// extraction queues a memory extraction job with every exchange.
	extraction bool
	// closingWords queues the writing of a session's closing words by a
	// model whenever the session changes (see closing.go).
	closingWords bool
	// inlineSummarizer, when set, writes the summary in a post's own
	// transaction.
	inlineSummarizer mentor.Summarizer
	// limits bound the turns and learners each facilitator adds a day.
	limits mentor.Limits
	// txOptions are the transactions' isolation and access mode: the
	// defaults, but for the long transactions of an export or an import
	// (see longTx).
	txOptions pgx.TxOptions
	// statementTimeout bounds each statement: statementTimeout for a
	// request's, the whole transaction for a long one's.
	statementTimeout string
	// lockTimeout bounds each wait for a row another request holds.
	lockTimeout string
	// replica, when set, is told where each write left the primary's WAL,
	// so that the writer's next reads wait for it there (see replica.go).
	replica *Replica
}

var _ mentor.Store = (*Store)(nil)

// NewStore returns a store whose conversations archive a segment every
// archiveTurns turns.
func NewStore(pool *pgxpool.Pool, archiveTurns int) *Store {
	return &Store{pool: pool, archiveTurns: strconv.Itoa(archiveTurns), txTimeout: DefaultTxTimeout,
		statementTimeout: statementTimeout, lockTimeout: fmt.Sprint(DefaultLockTimeout.Milliseconds())}
}

// WithTxTimeout replaces DefaultTxTimeout.
func (s *Store) WithTxTimeout(d time.Duration) *Store {
	s.txTimeout = d
	return s
}

// WithLockTimeout replaces DefaultLockTimeout.
func (s *Store) WithLockTimeout(d time.Duration) *Store {
	s.lockTimeout = fmt.Sprint(d.Milliseconds())
	return s
}

// WithExtraction makes every stored exchange queue a job that extracts
// learner memories from it (see Jobs).
func (s *Store) WithExtraction() *Store {
	s.extraction = true
	return s
}

// WithClosingWords makes every change to a session (an exchange, a memory
// learnt, its end) queue a job that has a model write its goodbye line and
// summary (see ClaimClosing).
func (s *Store) WithClosingWords() *Store {
	s.closingWords = true
	return s
}

// WithInlineSummarizer makes every post bring the summary up to date in its
// own transaction, with a summarizer that needs no network and answers in
// about a millisecond (the offline one): one transaction and one commit per
// post instead of two. Without it a post leaves the summary to the service
// (mentor.Appended.Job), which asks the summarizer once the turns are
// committed. The service's summarizer must then be one that sends nothing
// to a model too (app.New gives both the offline one): a post no longer
// reads the names that a model's prompt hides.
func (s *Store) WithInlineSummarizer(summarizer mentor.Summarizer) *Store {
	s.inlineSummarizer = summarizer
	return s
}

// inTx runs fn in one transaction as the caller: role memory_service (role
// authenticated's reads plus the service's writes, migration 0013), with
// the verified claims in request.jwt.claims, as Supabase's own API does.
// The settings are transaction-local, so nothing leaks to the next user of
// the connection.
//
// The transaction begins in the round trip that sets it up (actAsCaller);
// the request's charge (mentor.TakeRequestCharge), if it has one not taken
// yet, goes in that round trip too.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx, me string) error) (err error) {
	caller, ok := mentor.CallerFrom(ctx)
	if !ok {
		return mentor.Errorf(mentor.CodeUnauthenticated, "Authentication required")
	}
	charge, charged := mentor.TakeRequestCharge(ctx)
	if charged {
		defer func() {
			if err != nil {
				s.recount(ctx, charge, err)
			}
		}()
	}
	ctx, cancel := context.WithTimeout(ctx, s.txTimeout)
	defer cancel()

	b := &pgx.Batch{}
	b.BeginTx(s.txOptions)
	s.queueActAsCaller(b, caller)
	if charged {
		queueCharge(b, charge)
	}
	br := s.pool.SendBatch(ctx, b)
	tx := br.Tx()
	// Rolls back whatever did not commit, and gives the connection back.
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := readBatch(br, func(br pgx.BatchResults) error {
		if err := readActAsCaller(br); err != nil {
			return err
		}
		if charged {
			_, err := br.Exec()
			return err
		}
		return nil
	}); err != nil {
		return dbError(err)
	}
	if err := fn(tx, caller.UserID); err != nil {
		return dbError(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return dbError(err)
	}
	if s.replica != nil && s.txOptions.AccessMode != pgx.ReadOnly {
		if at, known := s.replica.noteWrite(ctx, caller.UserID); known {
			mentor.Wrote(ctx, mentor.WritePosition(at))
		}
	}
	return nil
}

// readInTx is inTx for a read whose statements go one after another, each
// needing the one before, rather than in read's single batch. It writes
// nothing but the request's charge, which no read needs to find, so it
// notes no write for the replica: that would cost a round trip to the
// primary, and hold the caller's next reads to a write never made.
func (s *Store) readInTx(ctx context.Context, fn func(tx pgx.Tx, me string) error) error {
	reading := *s
	reading.replica = nil
	return reading.inTx(ctx, fn)
}

// queueActAsCaller queues, at the start of a transaction, the check that
// the caller's user still exists (a token outlives its user by up to an
// hour, and a deleted user's requests must be refused rather than read
// nothing or fail on a foreign key), made as the service's login role,
// which reads auth.users where callers cannot; then the switch to role
// memory_service and the transaction's settings: the caller's claims,
// also the subject alone (auth.uid() reads request.jwt.claim.sub before
// it parses the claims, so a policy checked on every row written reads a
// setting, migration 0039), the archive limit the triggers read, and the
// statement and lock timeouts. readActAsCaller reads both.
//
// On Citus the settings are made with SET LOCAL (public.set_local,
// migration 0040), which Citus passes on to its worker nodes, where the
// policies and triggers run. Citus does so only within a transaction
// block, so every transaction of a caller's begins with BEGIN, sent in the
// same round trip. The switch of role needs no passing on: Citus reaches
// its workers as the role the coordinator runs as. Elsewhere they are
// made with set_config (localSetting).
func (s *Store) queueActAsCaller(b *pgx.Batch, caller mentor.Caller) {
	b.Queue(callerExistsSQL, caller.UserID)
	b.Queue(actAsCaller, string(caller.Claims), caller.UserID, s.archiveTurns, s.statementTimeout, s.lockTimeout)
}

const callerExistsSQL = `select exists (select 1 from auth.users where id = $1::uuid)`

// actAsCaller switches to role memory_service with the caller's claims
// ($1), subject ($2), archive limit ($3), statement timeout ($4) and lock
// timeout ($5), and
// turns JIT compilation off for the transaction: the planner's cost of a
// search of a long history passes JIT's thresholds, and compiling it took
// longer than running it many times over (measured: 100 ms to seconds, the
// whole of the slowest searches of a facilitator with 10,000 archived
// conversations). It is turned off here rather than for the connection, as
// a transaction pooler refuses a connection's startup settings, and rather
// than for the database, which the web app may share; by set_config, a
// built-in, as the coordinator is where Citus plans a request (its workers
// take theirs from their own configuration: README "Running on Citus").
var actAsCaller = `select set_config('role', 'memory_service', true),
	set_config('jit', 'off', true), ` +
	localSetting("request.jwt.claims", "$1") + `, ` +
	localSetting("request.jwt.claim.sub", "$2") + `, ` +
	localSetting("mentor.archive_turns", "$3") + `, ` +
	localSetting("statement_timeout", "$4") + `, ` +
	localSetting("lock_timeout", "$5")

// localSetting sets the setting name to value (an SQL expression) for the
// transaction: by SET LOCAL where Citus is to pass settings on to its
// workers (citus.propagate_set_commands, which `server migrate --citus`
// sets), by set_config elsewhere. SET LOCAL through a function and a
// dynamic statement cost five settings about 28 µs of Postgres's time per
// request, set_config 3 µs, and the test of the deployment 2 µs more.
func localSetting(name, value string) string {
	return `case when current_setting('citus.propagate_set_commands', true) = 'local'
		then public.set_local('` + name + `', ` + value + `)
		else set_config('` + name + `', ` + value + `, true) end`
}

// readActAsCaller reads the results of queueActAsCaller, after the
// transaction's BEGIN: unauthenticated when the caller's user is gone.
func readActAsCaller(br pgx.BatchResults) error {
	if _, err := br.Exec(); err != nil { // begin
		return err
	}
	var exists bool
	if err := br.QueryRow().Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return mentor.Errorf(mentor.CodeUnauthenticated, "This account no longer exists; sign in again")
	}
	_, err := br.Exec()
	return err
}

// read runs read-only queries as the caller in a single round trip: the
// transaction's BEGIN and settings, the queries queued by queue, and its
// COMMIT go as one batch, so the settings hold for every query and end
// with it. collect reads the queries' results in order. When a learner is
// named, the batch first checks that it is one of the caller's, and the
// read fails with not-found otherwise. The request's charge, if it has
// one not taken yet, comes right after the settings.
func (s *Store) read(ctx context.Context, learnerID *string, queue func(b *pgx.Batch, me string), collect func(br pgx.BatchResults) error) error {
	caller, ok := mentor.CallerFrom(ctx)
	if !ok {
		return mentor.Errorf(mentor.CodeUnauthenticated, "Authentication required")
	}
	ctx, cancel := context.WithTimeout(ctx, s.txTimeout)
	defer cancel()
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	s.queueActAsCaller(b, caller)
	charge, charged := mentor.TakeRequestCharge(ctx)
	if charged {
		queueReadCharge(b, charge)
	}
	if learnerID != nil {
		b.Queue(learnerNameSQL, caller.UserID, *learnerID)
	}
	queue(b, caller.UserID)
	b.Queue(`commit`)
	br := s.pool.SendBatch(ctx, b)
	// A read that failed left its transaction open: this ends it and gives
	// the connection back. After the batch's commit it only does the latter.
	defer br.Tx().Rollback(context.WithoutCancel(ctx))
	return dbError(readBatch(br, func(br pgx.BatchResults) error {
		if err := readActAsCaller(br); err != nil {
			return err
		}
		if charged {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if learnerID != nil {
			if _, err := learnerName(br.QueryRow()); err != nil {
				return err
			}
		}
		if err := collect(br); err != nil {
			return err
		}
		_, err := br.Exec() // commit
		return err
	}))
}

// batchSender is a pool or a transaction: what sends a batch.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// sendBatch sends the batch's statements in one round trip and reads their
// results with read; the batch is closed however read ends.
func sendBatch(ctx context.Context, to batchSender, b *pgx.Batch, read func(br pgx.BatchResults) error) error {
	return readBatch(to.SendBatch(ctx, b), read)
}

// readBatch reads a sent batch's results with read and closes it however
// read ends.
func readBatch(br pgx.BatchResults, read func(br pgx.BatchResults) error) error {
	if err := read(br); err != nil {
		br.Close()
		return err
	}
	return br.Close()
}

// collectRows reads the batch's next result as rows, each made into a T by
// scan.
func collectRows[T any](br pgx.BatchResults, scan pgx.RowToFunc[T]) ([]T, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scan)
}

// dbError turns a database failure into a memory error: the database being
// unreachable is a 503 the client can retry, anything else unexpected a 500
// that shows no internals. Errors that already are memory errors pass
// through.
func dbError(err error) error {
	if err == nil {
		return nil
	}
	var memErr *mentor.Error
	if errors.As(err, &memErr) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &mentor.Error{Code: mentor.CodeUnavailable, Message: "Request cancelled or timed out", Cause: err}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // shutdown, cannot connect now
			pgErr.Code == "53300": // too many connections
			return unavailable(err)
		case pgErr.Code == "40001", pgErr.Code == "40P01", // serialization failure, deadlock
			pgErr.Code == "55P03": // lock_timeout: another request holds the row
			return mentor.Busy("Busy, please retry", err)
		case pgErr.Code == "57014": // statement_timeout
			return &mentor.Error{Code: mentor.CodeUnavailable, Message: "The request took too long; please retry or ask for less", Cause: err}
		case pgErr.Code == quotaUsedUp:
			return refusal(pgErr)
		case pgErr.Code == "23503" && learnerForeignKey.MatchString(violatedConstraint(pgErr)):
			// The learner was erased while the request ran: it waited for
			// the erasure, which holds the learner's row, and then found
			// it gone.
			return &mentor.Error{Code: mentor.CodeNotFound, Message: "Learner not found", Cause: err}
		}
		return mentor.Internal(err)
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	if errors.As(err, &netErr) || errors.As(err, &connectErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err) {
		return unavailable(err)
	}
	return mentor.Internal(err)
}

// learnerForeignKey matches the name of a table's foreign key to its
// learner, and on Citus that of a shard's copy of it, which ends in the
// shard's number.
var learnerForeignKey = regexp.MustCompile(`_facilitator_id_learner_id_fkey(_[0-9]+)?$`)

// violatedConstraint is the name of the constraint an error says was
// violated. Citus passes a worker's error on with its code and message
// but not its fields, so there it is read from the message, which names
// it (Postgres's messages in English, as lc_messages has them by default).
func violatedConstraint(pgErr *pgconn.PgError) string {
	if pgErr.ConstraintName != "" {
		return pgErr.ConstraintName
	}
	if m := namedConstraint.FindStringSubmatch(pgErr.Message); m != nil {
		return m[1]
	}
	return ""
}

var namedConstraint = regexp.MustCompile(`constraint "([^"]+)"`)

func unavailable(cause error) error {
	return &mentor.Error{Code: mentor.CodeUnavailable, Message: "Database unavailable, please retry", Cause: cause}
}

// nilLearner stands for "no learner" in the per-conversation lookups, which
// compare coalesce(learner_id, nilLearner) so the general conversation is
// found through the same index as a learner's.
const nilLearner = "00000000-0000-0000-0000-000000000000"

func learnerKey(learnerID *string) string {
	if learnerID == nil {
		return nilLearner
	}
	return *learnerID
}

// sameConversation is the SQL condition matching rows of one conversation;
// $1 is the facilitator and $2 the learner key.
const sameConversation = `facilitator_id = $1::uuid
	and coalesce(learner_id, '` + nilLearner + `'::uuid) = $2::uuid`

// learnerNameSQL finds one of the caller's learners; RLS hides the others.
const learnerNameSQL = `select name from public.learners where facilitator_id = $1::uuid and id = $2::uuid`

// learnerName reads the result of learnerNameSQL: not-found unless the
// learner is the caller's.
func learnerName(row pgx.Row) (string, error) {
	var name string
	err := row.Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", mentor.Errorf(mentor.CodeNotFound, "Learner not found")
	}
	return name, err
}

// requireLearner fails with not-found unless the learner is one of the
// caller's (RLS hides everyone else's), and returns its name.
func requireLearner(ctx context.Context, tx pgx.Tx, me string, learnerID *string) (string, error) {
	if learnerID == nil {
		return "", nil
	}
	return learnerName(tx.QueryRow(ctx, learnerNameSQL, me, *learnerID))
}
