package postgres_test

import (
	"context"
	"slices"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// The background prompts hide the facilitator's other learners' names as
// well as the learner's, so the summary a post leaves to do and the input
// of an extraction job carry them: every learner of the facilitator's but
// the conversation's own, and no one else's.
func TestBackgroundWorkKnowsTheOtherLearnersNames(t *testing.T) {
	pool := pgtest.NewPool(t)
	facilitator, ada := seedLearner(t, pool)
	_, strangersLearner := seedLearner(t, pool)
	for _, q := range []struct{ sql, arg string }{
		{`insert into public.learners (facilitator_id, name) values ($1::uuid, 'Ben')`, facilitator},
		{`insert into public.learners (facilitator_id, name) values ($1::uuid, 'Cy')`, facilitator},
		{`update public.learners set name = 'Zed' where id = $1::uuid`, strangersLearner},
	} {
		if _, err := pool.Exec(context.Background(), q.sql, q.arg); err != nil {
			t.Fatal(err)
		}
	}
	ctx := asFacilitator(context.Background(), facilitator)
	store := postgres.NewStore(pool, 50).WithExtraction()
	want := map[string][]string{ada: {"Ben", "Cy"}, "": {"Ada", "Ben", "Cy"}}

	for _, learnerID := range []*string{&ada, nil} {
		out := mustAppend(t, ctx, store, learnerID, apptest.Exchange("Ben and Cy came over to play.", "Lovely!"))
		if got := sorted(out.Job.Request.OtherNames); !slices.Equal(got, want[deref(learnerID)]) {
			t.Errorf("learner %q: the summary job hides %v, want %v", deref(learnerID), got, want[deref(learnerID)])
		}
	}
	for range 2 {
		job, err := store.ClaimJob(context.Background())
		if err != nil || job == nil {
			t.Fatalf("claim: %v %v", job, err)
		}
		req, err := store.ExtractionInput(ctx, *job)
		if err != nil {
			t.Fatal(err)
		}
		if got := sorted(req.OtherNames); !slices.Equal(got, want[deref(job.LearnerID)]) {
			t.Errorf("learner %q: the extraction hides %v, want %v", deref(job.LearnerID), got, want[deref(job.LearnerID)])
		}
	}
}

func sorted(names []string) []string { return slices.Sorted(slices.Values(names)) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
