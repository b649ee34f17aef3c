package postgres_test

import (
	"context"
	"math"
	"testing"
	"time"

	"mentormemory/mentor"
	"mentormemory/postgres/pgtest"
)

// Confidence ages in the database (public.memory_confidence_now) as the
// mentor's constants say: ConfidenceDecay less for every full
// ConfidenceDecayDays since the last confirmation, never below
// ConfidenceFloor, never more for a confirmation stamped ahead of the
// clock, and a memory already at or under the floor stays where it is.
func TestConfidenceAgesAsTheMentorsConstantsSay(t *testing.T) {
	pool := pgtest.NewPool(t)
	day := 24 * time.Hour
	period := time.Duration(mentor.ConfidenceDecayDays) * day
	for _, tc := range []struct {
		confidence float64
		ago        time.Duration
		want       float64
	}{
		{mentor.RepeatConfidence, period - day, mentor.RepeatConfidence},
		{mentor.RepeatConfidence, period + day, mentor.RepeatConfidence - mentor.ConfidenceDecay},
		{mentor.RepeatConfidence, 3*period + day, mentor.RepeatConfidence - 3*mentor.ConfidenceDecay},
		{mentor.PersonConfidence, 100 * period, mentor.ConfidenceFloor},
		{mentor.ExtractedConfidence, -10 * period, mentor.ExtractedConfidence},
		{mentor.SupersededConfidence, 5 * period, mentor.SupersededConfidence},
		{0.1, 5 * period, 0.1},
	} {
		var got float64
		if err := pool.QueryRow(context.Background(), `select public.memory_confidence_now($1::real, now() - $2::interval)::float8`,
			tc.confidence, tc.ago).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("confidence %.2f confirmed %v ago is %.4f now, want %.2f", tc.confidence, tc.ago, got, tc.want)
		}
	}
}
