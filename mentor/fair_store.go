package mentor

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// LimitPerFacilitator returns store with each facilitator's calls limited
// to n at once: a call beyond waits up to wait for one of theirs to end,
// then fails with CodeUnavailable (a 503 with Retry-After). Each call is
// one transaction or one read on a connection of the pool, which has 4 on
// 2 cores; 16 posts of one facilitator at once made another's plain read
// wait 9 s, and 48 made it fail. Waiting for a model holds no slot: only
// the store's calls are counted. Calls without a caller pass through, and
// the store refuses them.
func LimitPerFacilitator(store Store, n int, wait time.Duration) Store {
	return &fairStore{store: store, slots: &callerSlots{n: n, wait: wait, byCaller: map[string]*slots{}}}
}

// fairStore is a Store whose every call takes one of its caller's slots.
// It names each method rather than embedding Store, so that a method added
// to Store cannot pass through unlimited.
type fairStore struct {
	store Store
	slots *callerSlots
}

var _ Store = (*fairStore)(nil)

// callerSlots are n slots per caller.
type callerSlots struct {
	n        int
	wait     time.Duration
	mu       sync.Mutex
	byCaller map[string]*slots
}

// slots are one caller's: a semaphore, and how many calls hold or wait for
// it, so that it is dropped when none does.
type slots struct {
	taken chan struct{}
	users int
}

// take waits for one of the caller's slots and returns what gives it back.
func (c *callerSlots) take(ctx context.Context) (release func(), err error) {
	caller, ok := CallerFrom(ctx)
	if !ok {
		return func() {}, nil
	}
	c.mu.Lock()
	s := c.byCaller[caller.UserID]
	if s == nil {
		s = &slots{taken: make(chan struct{}, c.n)}
		c.byCaller[caller.UserID] = s
	}
	s.users++
	c.mu.Unlock()
	leave := func() {
		c.mu.Lock()
		if s.users--; s.users == 0 {
			delete(c.byCaller, caller.UserID)
		}
		c.mu.Unlock()
	}

	timer := time.NewTimer(c.wait)
	defer timer.Stop()
	select {
	case s.taken <- struct{}{}:
		return func() {
			<-s.taken
			leave()
		}, nil
	case <-timer.C:
		err = fmt.Errorf("%d calls of facilitator %s already in progress", c.n, caller.UserID)
	case <-ctx.Done():
		err = ctx.Err()
	}
	leave()
	return nil, Busy("Too many of your requests at once, please retry", err)
}

// call runs do on one of the caller's slots.
func call[T any](f *fairStore, ctx context.Context, do func() (T, error)) (T, error) {
	release, err := f.slots.take(ctx)
	if err != nil {
		var none T
		return none, err
	}
	defer release()
	return do()
}

func (f *fairStore) ListLearners(ctx context.Context) ([]Learner, error) {
	return call(f, ctx, func() ([]Learner, error) { return f.store.ListLearners(ctx) })
}

func (f *fairStore) CreateLearner(ctx context.Context, name string) (Learner, error) {
	return call(f, ctx, func() (Learner, error) { return f.store.CreateLearner(ctx, name) })
}

func (f *fairStore) GetConversation(ctx context.Context, learnerID *string) (*ConversationRecord, error) {
	return call(f, ctx, func() (*ConversationRecord, error) { return f.store.GetConversation(ctx, learnerID) })
}

func (f *fairStore) AppendTurns(ctx context.Context, req AppendRequest) (Appended, error) {
	return call(f, ctx, func() (Appended, error) { return f.store.AppendTurns(ctx, req) })
}

func (f *fairStore) SaveSummary(ctx context.Context, job SummaryJob, summary string) (ConversationRecord, error) {
	return call(f, ctx, func() (ConversationRecord, error) { return f.store.SaveSummary(ctx, job, summary) })
}

func (f *fairStore) MarkSummaryStale(ctx context.Context, job SummaryJob) (ConversationRecord, error) {
	return call(f, ctx, func() (ConversationRecord, error) { return f.store.MarkSummaryStale(ctx, job) })
}

func (f *fairStore) ClearConversation(ctx context.Context, learnerID *string) (bool, error) {
	return call(f, ctx, func() (bool, error) { return f.store.ClearConversation(ctx, learnerID) })
}

func (f *fairStore) Search(ctx context.Context, q SearchQuery) ([]SearchResult, error) {
	return call(f, ctx, func() ([]SearchResult, error) { return f.store.Search(ctx, q) })
}

func (f *fairStore) SaveMemory(ctx context.Context, m NewMemory) (Saved, error) {
	return call(f, ctx, func() (Saved, error) { return f.store.SaveMemory(ctx, m) })
}

func (f *fairStore) UpdateMemory(ctx context.Context, id string, p MemoryPatch) (LearnerMemory, error) {
	return call(f, ctx, func() (LearnerMemory, error) { return f.store.UpdateMemory(ctx, id, p) })
}

func (f *fairStore) DeleteMemory(ctx context.Context, id string) error {
	_, err := call(f, ctx, func() (struct{}, error) { return struct{}{}, f.store.DeleteMemory(ctx, id) })
	return err
}

func (f *fairStore) ListMemories(ctx context.Context, q ListQuery) ([]LearnerMemory, error) {
	return call(f, ctx, func() ([]LearnerMemory, error) { return f.store.ListMemories(ctx, q) })
}

func (f *fairStore) Recall(ctx context.Context, q RecallQuery) (Recall, error) {
	return call(f, ctx, func() (Recall, error) { return f.store.Recall(ctx, q) })
}

func (f *fairStore) LiveSession(ctx context.Context, learnerID *string) (SessionState, error) {
	return call(f, ctx, func() (SessionState, error) { return f.store.LiveSession(ctx, learnerID) })
}

func (f *fairStore) EndSession(ctx context.Context, learnerID *string, reason string) (Ended, error) {
	return call(f, ctx, func() (Ended, error) { return f.store.EndSession(ctx, learnerID, reason) })
}

func (f *fairStore) Opening(ctx context.Context, learnerID *string) (*Opening, error) {
	return call(f, ctx, func() (*Opening, error) { return f.store.Opening(ctx, learnerID) })
}
