package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// Workers claiming at once each lease a job of their own: a job is found
// among every facilitator's, then leased by its key alone (as Citus
// requires, where no lock may span facilitators), and a job another worker
// leased meanwhile is passed over. Claimed until none is left, every job
// is leased exactly once.
func TestWorkersClaimingAtOnceNeverLeaseTheSameJob(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	const facilitators, jobsEach = 4, 5
	for range facilitators {
		facilitator := uuid.NewString()
		if _, err := pool.Exec(ctx, `insert into auth.users (id) values ($1::uuid)`, facilitator); err != nil {
			t.Fatal(err)
		}
		for j := range jobsEach {
			payload := fmt.Sprintf(`{"session_id": %q, "from_turn_id": %d, "through_turn_id": %d}`, uuid.NewString(), 2*j+1, 2*j+2)
			if _, err := pool.Exec(ctx, `insert into public.memory_jobs (facilitator_id, kind, dedupe_key, payload)
				values ($1::uuid, 'extract', $2, $3::jsonb)`, facilitator, fmt.Sprint("turns:", j), payload); err != nil {
				t.Fatal(err)
			}
		}
	}
	store := postgres.NewStore(pool, 50)

	var mu sync.Mutex
	leased := map[string]int{}
	lease := func(job *mentor.ExtractionJob) {
		mu.Lock()
		defer mu.Unlock()
		leased[fmt.Sprint(job.FacilitatorID, "/", job.ID)]++
	}
	var wg sync.WaitGroup
	for range facilitators * jobsEach / 2 {
		wg.Go(func() {
			job, err := store.ClaimJob(ctx)
			if err != nil {
				t.Error(err)
			} else if job != nil {
				lease(job)
			}
		})
	}
	wg.Wait()
	for {
		job, err := store.ClaimJob(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if job == nil {
			break
		}
		lease(job)
	}
	if len(leased) != facilitators*jobsEach {
		t.Errorf("%d jobs leased, want all %d", len(leased), facilitators*jobsEach)
	}
	for job, n := range leased {
		if n != 1 {
			t.Errorf("job %s leased %d times", job, n)
		}
	}
}
