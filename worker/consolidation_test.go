package worker_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"mentormemory/mentor"
	"mentormemory/tokens"
	"mentormemory/worker"
)

// remember stores a memory of Alex's as extraction would, made at when.
func (e *env) remember(t mentor.MemoryType, content string, metadata mentor.Metadata, when time.Time) string {
	e.t.Helper()
	saved, err := e.store.SaveMemory(e.ctx, mentor.NewMemory{LearnerID: e.alex, Type: t, Content: content,
		Importance: 0.6, Confidence: 0.7, Metadata: metadata, Source: mentor.SourceExtracted})
	if err != nil {
		e.t.Fatal(err)
	}
	e.exec(`update learner_memories set created_at = $2 where id = $1::uuid`, saved.Memory.ID, when)
	return saved.Memory.ID
}

// startRun claims the queued consolidation and starts it as the worker
// would, for a test to finish it by hand.
func (e *env) startRun() (mentor.ConsolidationJob, mentor.ConsolidationInput) {
	e.t.Helper()
	job, err := e.store.ClaimConsolidation(context.Background())
	if err != nil || job == nil {
		e.t.Fatalf("claim: %+v %v", job, err)
	}
	in, err := e.store.StartConsolidation(e.ctx, *job, "offline")
	if err != nil {
		e.t.Fatal(err)
	}
	return *job, in
}

func (e *env) statusOf(id string) string {
	e.t.Helper()
	var status string
	if err := e.pool.QueryRow(context.Background(), `select status from learner_memories where id = $1::uuid`, id).Scan(&status); err != nil {
		e.t.Fatal(err)
	}
	return status
}

func (e *env) consolidations() []mentor.ConsolidationRun {
	e.t.Helper()
	runs, err := e.svc.Consolidations(e.ctx, e.alex, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return runs
}

// A run asked for on demand keeps Alex's memories true: last week's test
// expires, the struggle a breakthrough settled is resolved, each change is
// in the memory's history, the expired memory leaves recall, and the audit
// trail says what the run did.
func TestConsolidationKeepsMemoryTrueAndLeavesAnAuditTrail(t *testing.T) {
	e := newEnv(t, worker.Config{})
	lastWeek := time.Now().AddDate(0, 0, -8)
	test := e.remember(mentor.Context, "Alex has a quadratics test on Friday", mentor.Metadata{"topic": "quadratics"}, lastWeek)
	confused := e.remember(mentor.Academic, "Alex confused the discriminant with the leading coefficient",
		mentor.Metadata{"topic": "discriminant", "resolution": "unresolved"}, lastWeek)
	connected := e.remember(mentor.Academic, "Alex connected the discriminant to the shape of the graph",
		mentor.Metadata{"topic": "discriminant", "resolution": "resolved"}, lastWeek.Add(time.Hour))
	dog := e.remember(mentor.Personal, "Alex has a dog named Max", nil, lastWeek)

	run, err := e.svc.Consolidate(e.ctx, *e.alex)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "queued" || run.Trigger != mentor.TriggerOnDemand {
		t.Fatalf("the run asked for: %+v", run)
	}
	again, err := e.svc.Consolidate(e.ctx, *e.alex)
	if err != nil || again.ID != run.ID {
		t.Fatalf("asked again while queued: %+v %v, want the same run %s", again, err, run.ID)
	}

	if ran, err := e.worker.RunConsolidationOnce(context.Background()); !ran || err != nil {
		t.Fatalf("the run did not run: %v %v", ran, err)
	}
	if got := []string{e.statusOf(test), e.statusOf(confused), e.statusOf(connected), e.statusOf(dog)}; got[0] != mentor.StatusExpired ||
		got[1] != mentor.StatusResolved || got[2] != mentor.StatusCurrent || got[3] != mentor.StatusCurrent {
		t.Fatalf("statuses test, struggle, breakthrough, dog: %v", got)
	}

	runs := e.consolidations()
	if len(runs) != 1 {
		t.Fatalf("audit trail: %+v", runs)
	}
	r := runs[0]
	if r.ID != run.ID || r.Status != "done" || r.Consolidator == nil || *r.Consolidator != "offline" || r.StartedAt == nil ||
		r.FinishedAt == nil || r.DurationMS == nil || *r.MemoriesIn != 4 || *r.MemoriesOut != 2 ||
		r.Changes["expired"] != 1 || r.Changes["resolved"] != 1 || r.Changes["merged"] != 0 || r.Error != nil {
		t.Fatalf("the run as recorded: %+v", r)
	}

	if r.ProfileTokensBefore != nil || r.ProfileTokensAfter == nil || *r.ProfileTokensAfter == 0 {
		t.Fatalf("the profile's size as recorded: before %v, after %v", r.ProfileTokensBefore, r.ProfileTokensAfter)
	}
	// The profile stands on what is current: the breakthrough and the dog,
	// not the expired test nor the settled struggle.
	profile, err := e.svc.Profile(e.ctx, *e.alex)
	if err != nil {
		t.Fatal(err)
	}
	var on []string
	for _, l := range profile.Lines {
		on = append(on, l.MemoryIDs...)
	}
	if len(on) != 2 || !slices.Contains(on, connected) || !slices.Contains(on, dog) || profile.Tokens != *r.ProfileTokensAfter {
		t.Fatalf("the profile after the run: %+v", profile)
	}

	history, err := e.svc.MemoryHistory(e.ctx, confused)
	if err != nil {
		t.Fatal(err)
	}
	last := history[len(history)-1]
	if last.Change != mentor.ChangeResolved || last.Actor != mentor.ActorConsolidation || last.JobID == nil ||
		last.RelatedMemoryID == nil || *last.RelatedMemoryID != connected {
		t.Fatalf("the resolution as recorded: %+v", last)
	}

	recall, err := e.svc.RecallContext(e.ctx, e.alex, "How did the quadratics test go?", mentor.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range [][]mentor.RecalledMemory{recall.Academic, recall.Personal, recall.Preferences, recall.Context, recall.EmotionalPatterns} {
		for _, m := range group {
			if m.ID == test || m.ID == confused {
				t.Fatalf("recall brought up %q, which is no longer current", m.Content)
			}
		}
	}

	// Nothing changed since: a second run changes nothing.
	e.svc.Consolidate(e.ctx, *e.alex)
	e.worker.RunConsolidationOnce(context.Background())
	if runs := e.consolidations(); len(runs) != 2 || runs[0].Status != "done" || runs[0].Changes["expired"] != 0 || *runs[0].MemoriesIn != 2 {
		t.Fatalf("the second run: %+v", runs[0])
	}
}

// A run whose changes cannot all be made applies none of them, as if the
// worker were killed between two: the run is queued again with the
// reason, and the retry applies them all.
func TestConsolidationThatFailsMidRunAppliesNothing(t *testing.T) {
	e := newEnv(t, worker.Config{})
	lastWeek := time.Now().AddDate(0, 0, -8)
	test := e.remember(mentor.Context, "Alex has a quadratics test on Friday", nil, lastWeek)
	confused := e.remember(mentor.Academic, "Alex confused the discriminant with the leading coefficient",
		mentor.Metadata{"topic": "discriminant", "resolution": "unresolved"}, lastWeek)
	e.remember(mentor.Academic, "Alex connected the discriminant to the shape of the graph",
		mentor.Metadata{"topic": "discriminant", "resolution": "resolved"}, lastWeek.Add(time.Hour))
	// The expiry goes first; the resolution after it fails.
	e.exec(`create function public.refuse_resolution() returns trigger language plpgsql as $$
		begin
			if new.status = 'resolved' then raise exception 'the worker died here'; end if;
			return new;
		end $$`)
	e.exec(`create trigger refuse_resolution before update on public.learner_memories
		for each row execute function public.refuse_resolution()`)

	if _, err := e.svc.Consolidate(e.ctx, *e.alex); err != nil {
		t.Fatal(err)
	}
	e.worker.RunConsolidationOnce(context.Background())
	if e.statusOf(test) != mentor.StatusCurrent || e.statusOf(confused) != mentor.StatusCurrent {
		t.Fatal("a run that failed part-way applied some of its changes")
	}
	if n := e.count(`select count(*) from memory_history where actor = 'consolidation'`); n != 0 {
		t.Fatalf("%d changes of the failed run are in the history", n)
	}
	runs := e.consolidations()
	if runs[0].Status != "queued" || runs[0].Error == nil {
		t.Fatalf("the failed run as recorded: %+v", runs[0])
	}

	e.exec(`drop trigger refuse_resolution on public.learner_memories`)
	e.exec(`update memory_jobs set run_after = now() where kind = 'consolidate'`)
	e.worker.RunConsolidationOnce(context.Background())
	if e.statusOf(test) != mentor.StatusExpired || e.statusOf(confused) != mentor.StatusResolved {
		t.Fatal("the retry did not apply the run")
	}
	if runs := e.consolidations(); len(runs) != 1 || runs[0].Status != "done" || runs[0].Error != nil {
		t.Fatalf("the retried run: %+v", runs)
	}
}

// A worker that lost its lease (another took the run over) applies
// nothing.
func TestConsolidationThatLostItsLeaseAppliesNothing(t *testing.T) {
	e := newEnv(t, worker.Config{})
	test := e.remember(mentor.Context, "Alex has a quadratics test on Friday", nil, time.Now().AddDate(0, 0, -8))
	if _, err := e.svc.Consolidate(e.ctx, *e.alex); err != nil {
		t.Fatal(err)
	}
	job, in := e.startRun()
	plan := mentor.ConsolidateOffline(in.Memories, time.Now())
	if len(plan.Expiries) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	e.exec(`update memory_jobs set lease_token = $2::uuid where id = $1`, job.ID, uuid.NewString())
	if err := e.store.CompleteConsolidation(e.ctx, job, plan, len(in.Memories), in.Profile); !errors.Is(err, mentor.ErrLeaseLost) {
		t.Fatalf("completing without the lease: %v, want it lost", err)
	}
	if e.statusOf(test) != mentor.StatusCurrent || e.count(`select count(*) from memory_history where actor = 'consolidation'`) != 0 {
		t.Fatal("a run that lost its lease applied its changes")
	}
}

// A session's end queues a run a little later; sessions ending before it
// runs share it. The nightly sweep queues one for a learner with new
// memories and none lately, once.
func TestConsolidationIsQueuedBySessionsEndAndNightly(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.post("Alex finished the worksheet", "Great work!")
	e.endSession()
	e.post("One more question", "Sure")
	e.endSession()
	runs := e.consolidations()
	if len(runs) != 1 || runs[0].Trigger != mentor.TriggerSessionEnd || runs[0].Status != "queued" {
		t.Fatalf("runs after two sessions ended: %+v", runs)
	}
	if n := e.count(`select count(*) from memory_jobs where kind = 'consolidate' and run_after > now() + interval '1 minute'`); n != 1 {
		t.Fatalf("%d consolidation jobs wait a little, want 1", n)
	}
	e.exec(`update memory_jobs set run_after = now() where kind = 'consolidate'`)
	e.worker.RunConsolidationOnce(context.Background())
	if runs := e.consolidations(); runs[0].Status != "done" {
		t.Fatalf("the session's run: %+v", runs[0])
	}

	// Nightly: nothing new since the run, nothing queued.
	if n, err := e.worker.QueueNightlyConsolidations(context.Background()); err != nil || n != 0 {
		t.Fatalf("nightly right after a run: %d %v, want none", n, err)
	}
	e.remember(mentor.Personal, "Alex has a dog named Max", nil, time.Now())
	e.exec(`update consolidation_runs set created_at = now() - interval '1 day', finished_at = now() - interval '1 day'`)
	if n, err := e.worker.QueueNightlyConsolidations(context.Background()); err != nil || n != 1 {
		t.Fatalf("nightly with a new memory: %d %v, want 1", n, err)
	}
	if n, err := e.worker.QueueNightlyConsolidations(context.Background()); err != nil || n != 0 {
		t.Fatalf("nightly again: %d %v, want none", n, err)
	}
	if runs := e.consolidations(); runs[0].Trigger != mentor.TriggerNightly || runs[0].Status != "queued" {
		t.Fatalf("the nightly run: %+v", runs[0])
	}
	if ran, err := e.worker.RunConsolidationOnce(context.Background()); !ran || err != nil {
		t.Fatalf("the nightly run did not run: %v", err)
	}
}

// A consolidation job the service never queued (no learner, no run) is
// failed for good with its reason as it is claimed, and holds back no
// real run.
func TestMalformedConsolidationJobsAreFailedAsClaimed(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.exec(`insert into memory_jobs (facilitator_id, learner_id, kind, dedupe_key, payload, fair_at)
		values ($1::uuid, null, 'consolidate', 'forged-1', '{"run_id": "a2b1c9d0-0000-4000-8000-000000000001"}', now() - interval '1 hour'),
			($1::uuid, $2::uuid, 'consolidate', 'forged-2', '{"run_id": "not a uuid"}', now() - interval '1 hour')`,
		e.facilitator.ID, *e.alex)
	if _, err := e.svc.Consolidate(e.ctx, *e.alex); err != nil {
		t.Fatal(err)
	}
	if ran, err := e.worker.RunConsolidationOnce(context.Background()); !ran || err != nil {
		t.Fatalf("the real run did not run: %v", err)
	}
	if runs := e.consolidations(); runs[0].Status != "done" {
		t.Fatalf("the real run: %+v", runs[0])
	}
	if n := e.count(`select count(*) from memory_jobs where dedupe_key like 'forged-%' and status = 'failed' and last_error like 'malformed job:%'`); n != 2 {
		t.Fatalf("%d forged jobs failed with their reason, want 2", n)
	}
}

// Each session's summary is stored as it ends, and a consolidation keeps
// the digest of the last sessions beside the profile, which the next
// opening carries. What is next comes from the latest session only: an
// earlier session's plan may have been done since.
func TestConsolidationKeepsADigestOfTheLastSessions(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.post("I'm so frustrated with fractions", "Next time we'll try the pizza game.")
	e.endSession()
	e.post("Oh, I get it now!", "Great work on fractions today. Next time we'll do word problems.")
	e.endSession()
	if n := e.count(`select count(*) from mentor_sessions where summary like '%1 exchange over%'`); n != 2 {
		t.Fatalf("%d ended sessions have their summary, want 2", n)
	}
	if n := e.count(`select count(*) from mentor_sessions where summary like '%Feelings: frustrated.%Left for next time: Next time we''ll try the pizza game.'`); n != 1 {
		t.Fatal("the first session's summary lacks how it felt or what was left for next time")
	}

	e.exec(`update memory_jobs set run_after = now() where kind = 'consolidate'`)
	if ran, err := e.worker.RunConsolidationOnce(context.Background()); !ran || err != nil {
		t.Fatalf("the run did not run: %v", err)
	}
	profile, err := e.svc.Profile(e.ctx, *e.alex)
	if err != nil {
		t.Fatal(err)
	}
	d := profile.Digest
	if len(d.Sessions) != 2 || d.Tokens == 0 || d.Tokens > mentor.DigestTokenBudget ||
		!slices.Equal(d.Standing, []string{"The last session, " + time.Now().Format("Monday 2 January") + ", ended excited.",
			"Next: Next time we'll do word problems."}) {
		t.Fatalf("the digest: %+v", d)
	}
	if !strings.Contains(profile.Markdown(), "## The last 2 sessions") {
		t.Fatalf("the profile's page lacks the digest:\n%s", profile.Markdown())
	}
	opening, err := e.svc.OpeningContext(e.ctx, e.alex, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if opening == nil || opening.RecentSessions == nil || !slices.Equal(opening.RecentSessions.Sessions, d.Sessions) {
		t.Fatalf("the opening lacks the digest: %+v", opening)
	}
}

// Lines the facilitator writes while a run plans are the ones its profile
// keeps, not the older copy the run read when it started.
func TestConsolidationKeepsLinesTheFacilitatorWroteWhileItRan(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.remember(mentor.Academic, "Alex connected the discriminant to the shape of the graph", nil, time.Now())
	if _, err := e.svc.WriteProfileLines(e.ctx, *e.alex, []mentor.ProfileLine{{Category: "who", Text: "Alex is in year 10"}}); err != nil {
		t.Fatal(err)
	}
	job, in := e.startRun()
	// While the run plans, the facilitator rewrites their lines.
	written := []mentor.ProfileLine{{Category: "who", Text: "Alex is in year 11"}, {Category: "goals", Text: "Pass the quadratics test"}}
	if _, err := e.svc.WriteProfileLines(e.ctx, *e.alex, written); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	plan := mentor.ConsolidateOffline(in.Memories, now)
	profile := mentor.BuildProfile(*job.LearnerID, in.LearnerName, plan.Remaining(in.Memories), in.Profile.OwnLines(),
		mentor.ProfileTokenBudget, tokens.Count, now)
	if err := e.store.CompleteConsolidation(e.ctx, job, plan, len(in.Memories), profile); err != nil {
		t.Fatal(err)
	}

	stored, err := e.svc.Profile(e.ctx, *e.alex)
	if err != nil {
		t.Fatal(err)
	}
	var own, fromMemories []string
	for _, l := range stored.Lines {
		if l.ByFacilitator {
			own = append(own, l.Text)
		} else {
			fromMemories = append(fromMemories, l.Text)
		}
	}
	slices.Sort(own)
	if want := []string{"Alex is in year 11", "Pass the quadratics test"}; !slices.Equal(own, want) {
		t.Errorf("the facilitator's lines after the run: %q, want the ones they wrote while it ran, %q", own, want)
	}
	if len(fromMemories) == 0 {
		t.Errorf("the run's lines from memories were lost: %+v", stored.Lines)
	}
}
