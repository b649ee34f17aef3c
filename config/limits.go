package config

import (
	"errors"

	"mentormemory/mentor"
)

// Limits are each facilitator's quotas (MENTOR_LIMIT_*), counted in
// Postgres so they hold across restarts and every server instance. 0 means
// no limit; MENTOR_LIMITS=off (default on) turns them all off, for a
// benchmark that plays a thousand facilitators at full speed.
//
// The defaults leave room for a very busy facilitator and bound what one
// can cost: a person reads, writes and asks the mentor at most a few times
// a minute, the web client a little more; 2,000 stored turns are about a
// thousand exchanges a day; 1,000 model calls and 2,000,000 tokens are
// about 150 long counselor exchanges with their summaries and extractions,
// at most about a dollar a day on the default model.
type Limits struct {
	mentor.Limits
	problems []error
}

func readLimits(r *reader) Limits {
	l := Limits{Limits: mentor.Limits{
		ReadsPerMinute:         r.number("MENTOR_LIMIT_READS_PER_MINUTE", 300, 0, 1_000_000),
		SearchesPerMinute:      r.number("MENTOR_LIMIT_SEARCHES_PER_MINUTE", 60, 0, 1_000_000),
		WritesPerMinute:        r.number("MENTOR_LIMIT_WRITES_PER_MINUTE", 120, 0, 1_000_000),
		ModelRequestsPerMinute: r.number("MENTOR_LIMIT_MODEL_REQUESTS_PER_MINUTE", 30, 0, 1_000_000),
		LearnersPerDay:         r.number("MENTOR_LIMIT_LEARNERS_PER_DAY", 100, 0, 1_000_000),
		TurnsPerDay:            r.number("MENTOR_LIMIT_TURNS_PER_DAY", 2_000, 0, 100_000_000),
		ModelCallsPerDay:       r.number("MENTOR_LIMIT_MODEL_CALLS_PER_DAY", 1_000, 0, 100_000_000),
		ModelTokensPerDay:      r.number("MENTOR_LIMIT_MODEL_TOKENS_PER_DAY", 2_000_000, 0, 1_000_000_000_000),
	}}
	if r.choice("MENTOR_LIMITS", "on", "off") {
		l.Limits = mentor.Limits{}
	}
	l.problems = r.problems
	return l
}

// Validate checks the limits.
func (l Limits) Validate() error { return errors.Join(l.problems...) }
