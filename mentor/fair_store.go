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
//
// The changes that lock a conversation's record or live session (a post,
// clearing, ending the session) also take turns per conversation, before
// the facilitator's slot: a post behind another to the same conversation
// waits here, up to wait, holding no connection, instead of on the row's
// lock in the database, holding one. (Across server instances the
// database's lock is still what orders them, bounded by its lock timeout.)
func LimitPerFacilitator(store Store, n int, wait time.Duration) Store {
	return &fairStore{
		store:           store,
		wait:            wait,
		perCaller:       newKeyedSlots(n, "Too many of your requests at once, please retry"),
		perConversation: newKeyedSlots(1, "Another change to this conversation is in progress, please retry"),
	}
}

// fairStore is a Store whose every call takes one of its caller's slots.
// It names each method rather than embedding Store, so that a method added
// to Store cannot pass through unlimited.
type fairStore struct {
	store Store
	// wait bounds a call's whole wait, for its conversation and its slot.
	wait            time.Duration
	perCaller       *keyedSlots
	perConversation *keyedSlots
}

var _ Store = (*fairStore)(nil)

// keyedSlots are n slots per key.
type keyedSlots struct {
	n int
	// busy is the message of a call refused after waiting.
	busy  string
	mu    sync.Mutex
	byKey map[string]*slots
}

func newKeyedSlots(n int, busy string) *keyedSlots {
	return &keyedSlots{n: n, busy: busy, byKey: map[string]*slots{}}
}

// slots are one key's: a semaphore, and how many calls hold or wait for
// it, so that it is dropped when none does.
type slots struct {
	taken chan struct{}
	users int
}

// take waits until deadline for one of key's slots and returns what gives
// it back.
func (k *keyedSlots) take(ctx context.Context, key string, deadline time.Time) (release func(), err error) {
	k.mu.Lock()
	s := k.byKey[key]
	if s == nil {
		s = &slots{taken: make(chan struct{}, k.n)}
		k.byKey[key] = s
	}
	s.users++
	k.mu.Unlock()
	leave := func() {
		k.mu.Lock()
		if s.users--; s.users == 0 {
			delete(k.byKey, key)
		}
		k.mu.Unlock()
	}

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case s.taken <- struct{}{}:
		return func() {
			<-s.taken
			leave()
		}, nil
	case <-timer.C:
		err = fmt.Errorf("%d calls for %s already in progress", k.n, key)
	case <-ctx.Done():
		err = ctx.Err()
	}
	leave()
	return nil, Busy(k.busy, err)
}

// call runs do on one of the caller's slots.
func call[T any](f *fairStore, ctx context.Context, do func() (T, error)) (T, error) {
	return callBy(f, ctx, time.Now().Add(f.wait), do)
}

// callBy runs do on one of the caller's slots, waiting for it until
// deadline.
func callBy[T any](f *fairStore, ctx context.Context, deadline time.Time, do func() (T, error)) (T, error) {
	caller, ok := CallerFrom(ctx)
	if !ok {
		return do()
	}
	release, err := f.perCaller.take(ctx, caller.UserID, deadline)
	if err != nil {
		var none T
		return none, err
	}
	defer release()
	return do()
}

// callOnConversation runs do once the conversation of learnerID (nil: the
// caller's general one) is free of the caller's other changes, then on one
// of the caller's slots: both waits together last at most f.wait.
func callOnConversation[T any](f *fairStore, ctx context.Context, learnerID *string, do func() (T, error)) (T, error) {
	caller, ok := CallerFrom(ctx)
	if !ok {
		return do()
	}
	key := caller.UserID + "/"
	if learnerID != nil {
		key += *learnerID
	}
	deadline := time.Now().Add(f.wait)
	release, err := f.perConversation.take(ctx, key, deadline)
	if err != nil {
		var none T
		return none, err
	}
	defer release()
	return callBy(f, ctx, deadline, do)
}

func (f *fairStore) ListLearners(ctx context.Context) ([]Learner, error) {
	return call(f, ctx, func() ([]Learner, error) { return f.store.ListLearners(ctx) })
}

func (f *fairStore) CreateLearner(ctx context.Context, name string) (Learner, error) {
	return call(f, ctx, func() (Learner, error) { return f.store.CreateLearner(ctx, name) })
}

func (f *fairStore) RenameLearner(ctx context.Context, learnerID, name string) (Learner, error) {
	return call(f, ctx, func() (Learner, error) { return f.store.RenameLearner(ctx, learnerID, name) })
}

func (f *fairStore) GetConversation(ctx context.Context, learnerID *string) (*ConversationRecord, error) {
	return call(f, ctx, func() (*ConversationRecord, error) { return f.store.GetConversation(ctx, learnerID) })
}

func (f *fairStore) AppendTurns(ctx context.Context, req AppendRequest) (Appended, error) {
	return callOnConversation(f, ctx, req.LearnerID, func() (Appended, error) { return f.store.AppendTurns(ctx, req) })
}

func (f *fairStore) SaveSummary(ctx context.Context, job SummaryJob, summary string) (ConversationRecord, error) {
	return call(f, ctx, func() (ConversationRecord, error) { return f.store.SaveSummary(ctx, job, summary) })
}

func (f *fairStore) MarkSummaryStale(ctx context.Context, job SummaryJob) (ConversationRecord, error) {
	return call(f, ctx, func() (ConversationRecord, error) { return f.store.MarkSummaryStale(ctx, job) })
}

func (f *fairStore) ClearConversation(ctx context.Context, learnerID *string) (bool, error) {
	return callOnConversation(f, ctx, learnerID, func() (bool, error) { return f.store.ClearConversation(ctx, learnerID) })
}

func (f *fairStore) Search(ctx context.Context, q SearchQuery) ([]SearchResult, error) {
	return call(f, ctx, func() ([]SearchResult, error) { return f.store.Search(ctx, q) })
}

func (f *fairStore) Archive(ctx context.Context, q ArchiveQuery) (ArchivedConversation, error) {
	return call(f, ctx, func() (ArchivedConversation, error) { return f.store.Archive(ctx, q) })
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

func (f *fairStore) MemoryHistory(ctx context.Context, id string) ([]MemoryChange, error) {
	return call(f, ctx, func() ([]MemoryChange, error) { return f.store.MemoryHistory(ctx, id) })
}

func (f *fairStore) QueueConsolidation(ctx context.Context, learnerID string) (ConsolidationRun, error) {
	return call(f, ctx, func() (ConsolidationRun, error) { return f.store.QueueConsolidation(ctx, learnerID) })
}

func (f *fairStore) ListConsolidations(ctx context.Context, learnerID *string, limit int) ([]ConsolidationRun, error) {
	return call(f, ctx, func() ([]ConsolidationRun, error) { return f.store.ListConsolidations(ctx, learnerID, limit) })
}

func (f *fairStore) Profile(ctx context.Context, learnerID string) (Profile, error) {
	return call(f, ctx, func() (Profile, error) { return f.store.Profile(ctx, learnerID) })
}

func (f *fairStore) SaveProfile(ctx context.Context, p Profile) error {
	_, err := call(f, ctx, func() (struct{}, error) { return struct{}{}, f.store.SaveProfile(ctx, p) })
	return err
}

func (f *fairStore) Export(ctx context.Context, learnerID *string, emit func(ExportRecord) error) error {
	_, err := call(f, ctx, func() (struct{}, error) { return struct{}{}, f.store.Export(ctx, learnerID, emit) })
	return err
}

func (f *fairStore) Import(ctx context.Context, next func() (ArchiveLine, error)) (map[string]ImportCount, error) {
	return call(f, ctx, func() (map[string]ImportCount, error) { return f.store.Import(ctx, next) })
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
	return callOnConversation(f, ctx, learnerID, func() (Ended, error) { return f.store.EndSession(ctx, learnerID, reason) })
}

func (f *fairStore) Opening(ctx context.Context, learnerID *string) (*Opening, error) {
	return call(f, ctx, func() (*Opening, error) { return f.store.Opening(ctx, learnerID) })
}

// EraseLearner takes the learner's conversation's turn, so a post to it
// waits in the server rather than on the learner's lock in the database.
func (f *fairStore) EraseLearner(ctx context.Context, learnerID string) (Erasure, error) {
	return callOnConversation(f, ctx, &learnerID, func() (Erasure, error) { return f.store.EraseLearner(ctx, learnerID) })
}

func (f *fairStore) EraseAccount(ctx context.Context) (Erasure, error) {
	return call(f, ctx, func() (Erasure, error) { return f.store.EraseAccount(ctx) })
}

func (f *fairStore) ListErasures(ctx context.Context, limit int) ([]Erasure, error) {
	return call(f, ctx, func() ([]Erasure, error) { return f.store.ListErasures(ctx, limit) })
}

func (f *fairStore) ProposeAction(ctx context.Context, p Proposal) (PendingAction, error) {
	return call(f, ctx, func() (PendingAction, error) { return f.store.ProposeAction(ctx, p) })
}

func (f *fairStore) GetAction(ctx context.Context, id string) (PendingAction, error) {
	return call(f, ctx, func() (PendingAction, error) { return f.store.GetAction(ctx, id) })
}

func (f *fairStore) ListActions(ctx context.Context, q ActionQuery) ([]PendingAction, error) {
	return call(f, ctx, func() ([]PendingAction, error) { return f.store.ListActions(ctx, q) })
}

func (f *fairStore) DecideAction(ctx context.Context, id string, confirm bool, embedding *Embedding) (PendingAction, error) {
	return call(f, ctx, func() (PendingAction, error) { return f.store.DecideAction(ctx, id, confirm, embedding) })
}

func (f *fairStore) FlagMemory(ctx context.Context, id string) (LearnerMemory, error) {
	return call(f, ctx, func() (LearnerMemory, error) { return f.store.FlagMemory(ctx, id) })
}

func (f *fairStore) MemorySources(ctx context.Context, id string) (MemorySources, error) {
	return call(f, ctx, func() (MemorySources, error) { return f.store.MemorySources(ctx, id) })
}

func (f *fairStore) ForgetMemories(ctx context.Context, q ForgetQuery) (int, error) {
	return call(f, ctx, func() (int, error) { return f.store.ForgetMemories(ctx, q) })
}

func (f *fairStore) LearningNow(ctx context.Context, learnerID string) (LearningNow, error) {
	return call(f, ctx, func() (LearningNow, error) { return f.store.LearningNow(ctx, learnerID) })
}

func (f *fairStore) LearnerSettings(ctx context.Context, learnerID string) (LearnerSettings, error) {
	return call(f, ctx, func() (LearnerSettings, error) { return f.store.LearnerSettings(ctx, learnerID) })
}

func (f *fairStore) SetLearnerLearning(ctx context.Context, learnerID string, learning bool) (LearnerSettings, error) {
	return call(f, ctx, func() (LearnerSettings, error) { return f.store.SetLearnerLearning(ctx, learnerID, learning) })
}

func (f *fairStore) AccountSettings(ctx context.Context) (AccountSettings, error) {
	return call(f, ctx, func() (AccountSettings, error) { return f.store.AccountSettings(ctx) })
}

func (f *fairStore) ChangeAccountSettings(ctx context.Context, c AccountSettingsChange) (AccountSettings, error) {
	return call(f, ctx, func() (AccountSettings, error) { return f.store.ChangeAccountSettings(ctx, c) })
}
