package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mentormemory/mentor"
)

// Quotas are counted in public.usage_counters by use_quota (migration
// 0017), one statement per charge, always queued into a batch the request
// sends anyway: the request's charge for its kind with the caller's
// settings, the turns with their insert, a learner with its insert. A
// refusal is an error, so it undoes what its transaction did; a refused
// request changes nothing and is not counted.

// WithLimits makes posts count the turns they store, and new learners,
// against limits; by default nothing is limited.
func (s *Store) WithLimits(limits mentor.Limits) *Store {
	s.limits = limits
	return s
}

// quotaUsedUp is the SQLSTATE of use_quota's refusal.
const quotaUsedUp = "PT429"

// queueCharge queues c; the batch's reader takes its result with Exec.
func queueCharge(b *pgx.Batch, c mentor.Charge) {
	b.Queue(`select public.use_quota($1, $2, nullif($3, 0))`, string(c.Counter), c.Amount, c.Limit)
}

// queueReadCharge is queueCharge in a transaction that otherwise only
// reads. Its commit does not wait for the disk (synchronous_commit off): a
// crash of the database may forget the last fraction of a second of
// counts, which matters little to a limit, while a flush of the log on
// every read cost a third of a millisecond here, and more on network
// storage.
func queueReadCharge(b *pgx.Batch, c mentor.Charge) {
	b.Queue(`select set_config('synchronous_commit', 'off', true), public.use_quota($1, $2, nullif($3, 0))`,
		string(c.Counter), c.Amount, c.Limit)
}

// refusal is use_quota's refusal as the caller sees it: which counter, and
// how long until its window ends.
func refusal(pgErr *pgconn.PgError) error {
	seconds, _ := strconv.Atoi(pgErr.Detail)
	refused := mentor.QuotaUsedUp(mentor.Counter(pgErr.ConstraintName), time.Duration(seconds)*time.Second)
	refused.Cause = pgErr
	return refused
}

// UseQuotas implements mentor.Quotas in one round trip: the caller's
// settings and every charge, in one implicit transaction.
func (s *Store) UseQuotas(ctx context.Context, charges ...mentor.Charge) error {
	return s.read(ctx, nil, func(b *pgx.Batch, _ string) {
		for _, c := range charges {
			queueReadCharge(b, c)
		}
	}, func(br pgx.BatchResults) error {
		for range charges {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
}

// recount counts again the charge of a request whose transaction rolled
// back with err, taking the charge with it: a failed request costs the
// database like any other, so it counts too. Not a refused one, not when
// the database is unreachable, which would only make the caller wait
// twice, and not for a user who no longer exists.
func (s *Store) recount(ctx context.Context, charge mentor.Charge, err error) {
	switch mentor.ErrorCode(err) {
	case mentor.CodeRateLimited, mentor.CodeUnavailable, mentor.CodeUnauthenticated:
		return
	}
	charge.Limit = 0 // it was within the limit when it was taken
	// The caller gets the request's own error either way; a count that
	// could not be made is one request less counted, nothing more.
	_ = s.UseQuotas(context.WithoutCancel(ctx), charge)
}

// DeferJob puts a claimed job back until the facilitator's model budget
// has room again: it runs at until, and the attempt it was claimed with is
// given back, so a budget used up never fails an exchange's extraction.
func (s *Store) DeferJob(ctx context.Context, job mentor.Job, until time.Time) error {
	return s.execAsWorker(ctx, `update public.memory_jobs
		set status = 'pending', run_after = $4, attempts = greatest(attempts - 1, 0), lease_token = null,
			last_error = 'waiting for the day''s model budget'
		where facilitator_id = $1::uuid and id = $2 and lease_token = $3::uuid`,
		job.FacilitatorID, job.ID, job.Lease, until)
}
