package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
	"mentormemory/worker"
)

func (e *env) setLearning(on bool) {
	e.t.Helper()
	if _, err := e.svc.SetLearnerLearning(e.ctx, *e.alex, on); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) memoriesOfAlex() []mentor.LearnerMemory {
	e.t.Helper()
	list, err := e.svc.ListMemories(e.ctx, mentor.ListQuery{LearnerID: e.alex})
	if err != nil {
		e.t.Fatal(err)
	}
	return list
}

// With learning off for a learner, nothing is learnt: the extraction queued
// before is done without asking the model, exchanges posted while off queue
// nothing, no consolidation is queued (session end, on demand, nightly) and
// a run queued before does nothing, and no profile is built; conversation
// memory keeps working. On again, what was said meanwhile stays unlearnt,
// and the next exchange is learnt from.
func TestLearningOffLearnsNothingAndOnAgainSkipsTheGap(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.reply = func(int) (int, string) { return 200, memoriesReply("Alex loves comic books") }
	e.post("Alex read comic books all weekend.", "Comics count as reading.")
	if _, err := e.svc.Consolidate(e.ctx, *e.alex); err != nil {
		t.Fatal(err)
	}
	e.setLearning(false)

	if !e.runOnce() {
		t.Fatal("the extraction queued before learning was turned off did not run")
	}
	if calls := len(e.model.Calls()); calls != 0 {
		t.Fatalf("the model was asked %d times while learning was off", calls)
	}
	if list := e.memoriesOfAlex(); len(list) != 0 {
		t.Fatalf("learnt while off: %+v", list)
	}
	if ran, err := e.worker.RunConsolidationOnce(context.Background()); !ran || err != nil {
		t.Fatalf("the consolidation queued before did not run: %v %v", ran, err)
	}
	if runs := e.consolidations(); runs[0].Status != "failed" || runs[0].Error == nil {
		t.Fatalf("the run queued before learning was off: %+v", runs[0])
	}
	if n := e.count(`select count(*) from learner_profiles`); n != 0 {
		t.Fatalf("%d profiles built while learning was off", n)
	}

	e.post("Alex is scared of the dark and hates spiders.", "Let's plan a night light.")
	if n := e.count(`select count(*) from memory_jobs where kind = 'extract'`); n != 1 {
		t.Fatalf("%d extraction jobs, want only the one queued before learning was off", n)
	}
	e.endSession()
	if _, err := e.svc.Consolidate(e.ctx, *e.alex); !errors.Is(err, mentor.ErrLearningOff) {
		t.Fatalf("consolidating on demand while off: %v, want learning off", err)
	}
	e.remember(mentor.Personal, "Alex has a dog named Max", nil, time.Now())
	if n, err := e.worker.QueueNightlyConsolidations(context.Background()); err != nil || n != 0 {
		t.Fatalf("nightly while off: %d %v, want none", n, err)
	}
	if n := e.count(`select count(*) from consolidation_runs`); n != 1 {
		t.Fatalf("%d consolidation runs, want only the one before learning was off", n)
	}
	// Conversation memory works as ever.
	conv, err := e.svc.Get(e.ctx, e.alex)
	if err != nil || conv == nil || conv.TurnCount != 4 || !strings.Contains(conv.Summary, "spiders") {
		t.Fatalf("the conversation while learning is off: %v, %v", conv, err)
	}
	found, err := e.svc.Search(e.ctx, mentor.SearchQuery{Text: "spiders", IncludeArchive: true})
	if err != nil || len(found) != 1 {
		t.Fatalf("search while learning is off: %+v %v", found, err)
	}

	e.setLearning(true)
	if e.runOnce() {
		t.Fatal("a job ran after learning was on again: the gap was learnt from")
	}
	e.reply = func(int) (int, string) { return 200, memoriesReply("Alex now reads before bed") }
	e.post("Alex now reads before bed.", "Lovely habit.")
	if !e.runOnce() {
		t.Fatal("the exchange after learning was on again was not learnt from")
	}
	var learnt []string
	for _, m := range e.memoriesOfAlex() {
		if m.Content != "Alex has a dog named Max" { // the one remembered by hand
			learnt = append(learnt, m.Content)
		}
	}
	if len(learnt) != 1 || learnt[0] != "Alex now reads before bed" {
		t.Fatalf("learnt %q, want only what was said after learning was on again", learnt)
	}
	if calls := e.model.Calls(); len(calls) != 1 {
		t.Fatalf("the model was asked %d times, want once", len(calls))
	}
}

// Learning off for the whole account stops the learning of every
// conversation, the general one too.
func TestAccountLearningOffQueuesNoExtraction(t *testing.T) {
	e := newEnv(t, worker.Config{})
	off := false
	if _, err := e.svc.ChangeAccountSettings(e.ctx, mentor.AccountSettingsChange{Learning: &off}); err != nil {
		t.Fatal(err)
	}
	e.post("Alex read comic books all weekend.", "Comics count as reading.")
	if _, err := e.svc.Update(e.ctx, nil, apptest.Exchange("Our family moves house in May.", "A big change."), false); err != nil {
		t.Fatal(err)
	}
	if n := e.count(`select count(*) from memory_jobs`); n != 0 {
		t.Fatalf("%d jobs queued with the account's learning off", n)
	}
	settings, err := e.svc.LearnerSettings(e.ctx, *e.alex)
	if err != nil || !settings.Learning || settings.AccountLearning {
		t.Fatalf("Alex's settings: %+v %v, want Alex's own on and the account's off", settings, err)
	}
}

// Retention forgets the memories whose confidence as of now is below 0.5
// and that nobody confirmed within the account's retention_days, recording
// each as forgotten by retention with no text left in its history; it
// keeps confident or recently confirmed memories, and touches no account
// without retention.
func TestRetentionForgetsLowConfidenceMemoriesLongUnconfirmed(t *testing.T) {
	e := newEnv(t, worker.Config{})
	lastSeen := func(id string, daysAgo int) {
		e.exec(`update learner_memories set last_seen_at = now() - make_interval(days => $2) where id = $1::uuid`, id, daysAgo)
	}
	faded := e.remember(mentor.Personal, "Alex once liked stickers", nil, time.Now())
	lastSeen(faded, 100) // 0.7 → 0.4 as of now
	confident := e.remember(mentor.Personal, "Alex has a dog named Max", nil, time.Now())
	e.exec(`update learner_memories set confidence = 1 where id = $1::uuid`, confident)
	lastSeen(confident, 100) // 1 → 0.7
	recent := e.remember(mentor.Academic, "Alex struggles with long division", nil, time.Now())
	e.exec(`update learner_memories set confidence = 0.4 where id = $1::uuid`, recent)
	lastSeen(recent, 10)

	other := apptest.NewUser(t, e.pool)
	otherCtx := mentor.WithCaller(context.Background(), other.Caller())
	kept, err := e.store.SaveMemory(otherCtx, mentor.NewMemory{Type: mentor.Personal, Content: "Our cat is called Pip",
		Importance: 0.6, Confidence: 0.7, Source: mentor.SourceExtracted})
	if err != nil {
		t.Fatal(err)
	}
	lastSeen(kept.Memory.ID, 100)

	if n, err := e.worker.ApplyRetention(context.Background()); err != nil || n != 0 {
		t.Fatalf("retention without a setting forgot %d (%v)", n, err)
	}
	days := 30
	if _, err := e.svc.ChangeAccountSettings(e.ctx, mentor.AccountSettingsChange{SetRetention: true, RetentionDays: &days}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.worker.ApplyRetention(context.Background()); err != nil || n != 1 {
		t.Fatalf("retention forgot %d (%v), want the one faded memory", n, err)
	}
	if n := e.count(`select count(*) from learner_memories where id = $1::uuid`, faded); n != 0 {
		t.Fatal("the faded memory is still there")
	}
	if n := e.count(`select count(*) from learner_memories where id = any($1::uuid[])`,
		[]string{confident, recent, kept.Memory.ID}); n != 3 {
		t.Fatalf("%d of the 3 memories retention must keep are left", n)
	}
	history, err := e.svc.MemoryHistory(e.ctx, faded)
	if err != nil {
		t.Fatal(err)
	}
	last := history[len(history)-1]
	if last.Change != mentor.ChangeForgotten || last.Actor != mentor.ActorRetention {
		t.Fatalf("the last change: %+v, want forgotten by retention", last)
	}
	for _, h := range history {
		if h.ContentBefore != nil || h.ContentAfter != nil {
			t.Fatalf("the forgotten memory's history keeps its text: %+v", h)
		}
	}
	if n, err := e.worker.ApplyRetention(context.Background()); err != nil || n != 0 {
		t.Fatalf("retention again forgot %d (%v)", n, err)
	}
}

// What extraction stores names the turns it was learnt from, and a repeat
// adds its own: the memory's sources are both exchanges, with their dates.
func TestExtractedMemoriesNameTheirSourceTurns(t *testing.T) {
	e := newEnv(t, worker.Config{})
	e.reply = func(int) (int, string) { return 200, memoriesReply("Alex loves comic books") }
	e.post("Alex read comic books all weekend.", "Comics count as reading.")
	e.runOnce()
	e.post("Alex still loves comic books.", "Let's find a comic about fractions.")
	e.runOnce()
	list := e.memoriesOfAlex()
	if len(list) != 1 {
		t.Fatalf("memories: %+v, want the one reinforced", list)
	}
	sources, err := e.svc.MemorySources(e.ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(sources.Turns) != 4 || sources.Turns[0].Content != "Alex read comic books all weekend." ||
		sources.Turns[3].Content != "Let's find a comic about fractions." || sources.Turns[0].CreatedAt.IsZero() || sources.Note != "" {
		t.Fatalf("sources: %+v, want both exchanges", sources)
	}
}
