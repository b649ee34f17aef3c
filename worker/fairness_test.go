package worker_test

import (
	"context"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/worker"
)

// A facilitator who queued a thousand extractions does not hold back
// another's one: the other's job is among the first two claimed, though
// all thousand were queued before it.
func TestJobsAreClaimedFairlyAcrossFacilitators(t *testing.T) {
	e := newEnv(t, worker.Config{})
	busy := apptest.NewUser(t, e.pool)
	e.exec(`insert into memory_jobs (facilitator_id, kind, dedupe_key, payload)
		select $1::uuid, 'extract', 'burst:' || g,
			jsonb_build_object('session_id', gen_random_uuid(), 'from_turn_id', 2 * g, 'through_turn_id', 2 * g + 1)
		from generate_series(1, 1000) g`, busy.ID)
	e.post("gotta go feed my dog Max", "Say hi to Max!")
	patient := apptest.Scalar[string](t, e.pool, `select facilitator_id::text from memory_jobs where dedupe_key not like 'burst:%'`)

	var claimed []string
	for range 2 {
		job, err := e.store.ClaimJob(context.Background())
		if err != nil || job == nil {
			t.Fatalf("claim: %v %v", job, err)
		}
		claimed = append(claimed, job.FacilitatorID)
	}
	if claimed[0] != patient && claimed[1] != patient {
		t.Fatalf("the first two claims went to %v; the one job of %s should be among them", claimed, patient)
	}
}
