package mentor

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Quotas. What each facilitator does is counted per window, in the store,
// so the limits hold across restarts and across every server sharing the
// database: requests a minute by kind, and per day (UTC) the learners
// added, the turns stored and the model's calls and tokens. A minute runs
// from the first request after the last one ended, a day is a UTC day; a
// refusal says exactly when the window ends.

// Counter names what is counted, and its window after the slash.
type Counter string

const (
	ReadRequests   Counter = "read/minute"   // plain reads
	SearchRequests Counter = "search/minute" // ranked reads: search and recall
	WriteRequests  Counter = "write/minute"  // anything that changes memory
	ModelRequests  Counter = "model/minute"  // the counselor, and the tools a model calls
	LearnersAdded  Counter = "learners/day"
	TurnsStored    Counter = "turns/day"
	ModelCalls     Counter = "model_calls/day"
	ModelTokens    Counter = "model_tokens/day"
)

// Limits are every facilitator's quotas. Zero means no limit: nothing is
// counted then.
type Limits struct {
	ReadsPerMinute         int
	SearchesPerMinute      int
	WritesPerMinute        int
	ModelRequestsPerMinute int
	LearnersPerDay         int
	TurnsPerDay            int
	ModelCallsPerDay       int
	ModelTokensPerDay      int
}

// Of is the limit of counter, zero when it has none.
func (l Limits) Of(c Counter) int {
	switch c {
	case ReadRequests:
		return l.ReadsPerMinute
	case SearchRequests:
		return l.SearchesPerMinute
	case WriteRequests:
		return l.WritesPerMinute
	case ModelRequests:
		return l.ModelRequestsPerMinute
	case LearnersAdded:
		return l.LearnersPerDay
	case TurnsStored:
		return l.TurnsPerDay
	case ModelCalls:
		return l.ModelCallsPerDay
	case ModelTokens:
		return l.ModelTokensPerDay
	}
	return 0
}

// Charge is usage to count: Amount more on Counter, refused if that takes
// it past Limit. A charge without a limit (zero) counts usage that happened
// already and is never refused.
type Charge struct {
	Counter Counter
	Amount  int64
	Limit   int64
}

// Charge is amount on counter under its limit; false when counter has no
// limit, and then nothing needs counting.
func (l Limits) Charge(c Counter, amount int64) (Charge, bool) {
	limit := l.Of(c)
	return Charge{Counter: c, Amount: amount, Limit: int64(limit)}, limit > 0
}

// A request's charge for its kind rides with its first database statement
// rather than cost a round trip of its own: the HTTP layer puts it in the
// request's context, and the store takes it, once, into the first batch or
// transaction it sends for the request.
type requestCharge struct {
	charge Charge
	taken  atomic.Bool
}

type requestChargeKey struct{}

// WithRequestCharge returns a context whose first database work charges c.
func WithRequestCharge(ctx context.Context, c Charge) context.Context {
	return context.WithValue(ctx, requestChargeKey{}, &requestCharge{charge: c})
}

// TakeRequestCharge returns the request's charge the first time it is
// asked for; false after that, or when the request carries none.
func TakeRequestCharge(ctx context.Context) (Charge, bool) {
	rc, ok := ctx.Value(requestChargeKey{}).(*requestCharge)
	if !ok || !rc.taken.CompareAndSwap(false, true) {
		return Charge{}, false
	}
	return rc.charge, true
}

// usedUp is what a caller refused by each counter is told.
var usedUp = map[Counter]string{
	ReadRequests:   "Too many requests to read memory this minute",
	SearchRequests: "Too many searches and recalls this minute",
	WriteRequests:  "Too many changes this minute",
	ModelRequests:  "Too many requests to the mentor this minute",
	LearnersAdded:  "The day's limit of new learners is reached",
	TurnsStored:    "The day's limit of stored turns is reached",
	ModelCalls:     "The day's model budget is used up (model calls)",
	ModelTokens:    "The day's model budget is used up (model tokens)",
}

// QuotaUsedUp is the refusal of a charge on counter, whose window ends
// after retryAfter.
func QuotaUsedUp(c Counter, retryAfter time.Duration) *Error {
	what, ok := usedUp[c]
	if !ok {
		what = "A usage limit is reached"
	}
	retryAfter = max(retryAfter, time.Second)
	return &Error{
		Code:       CodeRateLimited,
		Message:    fmt.Sprintf("%s; try again in %s", what, retryAfter.Round(time.Second)),
		RetryAfter: retryAfter,
	}
}
