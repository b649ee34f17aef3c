package apptest

import (
	"testing"

	"mentormemory/mentor"
)

// Used is a facilitator's count on counter in its current window, 0 when
// nothing was counted, read as the database's owner.
func Used(tb testing.TB, db DB, facilitatorID string, counter mentor.Counter) int64 {
	tb.Helper()
	return Scalar[int64](tb, db, `select coalesce(sum(used), 0)::bigint from public.usage_counters
		where facilitator_id = $1::uuid and counter = $2 and window_ends_at > now()`, facilitatorID, string(counter))
}

// EndWindow ends the current window of a facilitator's counter, as time
// passing would: the next use starts a new one.
func EndWindow(tb testing.TB, db DB, facilitatorID string, counter mentor.Counter) {
	tb.Helper()
	Exec(tb, db, `update public.usage_counters set window_ends_at = now()
		where facilitator_id = $1::uuid and counter = $2`, facilitatorID, string(counter))
}
