package mentor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// blockingStore holds every ListLearners call until release is closed,
// telling entered about each.
type blockingStore struct {
	Store
	entered chan string
	release chan struct{}
}

func (s *blockingStore) ListLearners(ctx context.Context) ([]Learner, error) {
	caller, _ := CallerFrom(ctx)
	s.entered <- caller.UserID
	<-s.release
	return nil, nil
}

// AppendTurns is held like ListLearners, telling entered the learner.
func (s *blockingStore) AppendTurns(ctx context.Context, req AppendRequest) (Appended, error) {
	s.entered <- *req.LearnerID
	<-s.release
	return Appended{}, nil
}

func TestEachFacilitatorUsesTheStoreAtMostNAtOnce(t *testing.T) {
	inner := &blockingStore{entered: make(chan string, 8), release: make(chan struct{})}
	store := LimitPerFacilitator(inner, 2, 50*time.Millisecond)
	a := WithCaller(context.Background(), Caller{UserID: "a"})
	b := WithCaller(context.Background(), Caller{UserID: "b"})

	done := make(chan error, 3)
	for _, ctx := range []context.Context{a, a, b} {
		go func() {
			_, err := store.ListLearners(ctx)
			done <- err
		}()
	}
	// Both of a's calls and b's are in the store at once.
	entered := map[string]int{}
	for range 3 {
		entered[<-inner.entered]++
	}
	if entered["a"] != 2 || entered["b"] != 1 {
		t.Fatalf("in the store: %v, want a twice and b once", entered)
	}

	// A third of a's calls waits for one of theirs to end, then is refused.
	if _, err := store.ListLearners(a); ErrorCode(err) != CodeUnavailable {
		t.Fatalf("a's third call: %v, want %s", err, CodeUnavailable)
	}

	close(inner.release)
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.ListLearners(a); err != nil {
		t.Fatalf("a's call once the others ended: %v", err)
	}
	// Nothing is kept for callers with no call in progress.
	if n := len(store.(*fairStore).perCaller.byKey); n != 0 {
		t.Fatalf("slots kept for %d callers after every call ended", n)
	}
}

// A post behind another to the same conversation waits before the store,
// holding none of the facilitator's slots (so no connection), and is
// refused after the wait; a post to another conversation goes ahead.
func TestPostsToOneConversationWaitOutsideTheStore(t *testing.T) {
	inner := &blockingStore{entered: make(chan string, 8), release: make(chan struct{})}
	store := LimitPerFacilitator(inner, 2, 200*time.Millisecond)
	a := WithCaller(context.Background(), Caller{UserID: "a"})
	alex, sam := "alex", "sam"

	done := make(chan error, 3)
	post := func(learner *string) {
		_, err := store.AppendTurns(a, AppendRequest{LearnerID: learner})
		done <- err
	}
	go post(&alex)
	if got := <-inner.entered; got != alex {
		t.Fatalf("entered %q", got)
	}
	second := make(chan error, 1)
	go func() {
		_, err := store.AppendTurns(a, AppendRequest{LearnerID: &alex})
		second <- err
	}()
	// The second post to Alex's conversation waits for it...
	gate := store.(*fairStore).perConversation
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		gate.mu.Lock()
		waiting := gate.byKey["a/"+alex] != nil && gate.byKey["a/"+alex].users == 2
		gate.mu.Unlock()
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second post to one conversation did not wait for the first")
		}
	}
	// ...holding none of the facilitator's slots: a post to Sam's
	// conversation takes the other one and reaches the store.
	go post(&sam)
	select {
	case got := <-inner.entered:
		if got != sam {
			t.Fatalf("entered %q, want the post to Sam's conversation", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the post to Sam's conversation never reached the store")
	}
	if err := <-second; ErrorCode(err) != CodeUnavailable || !errors.Is(err, ErrBusy) {
		t.Fatalf("the second post to one conversation: %v, want %s", err, CodeUnavailable)
	}
	close(inner.release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.AppendTurns(a, AppendRequest{LearnerID: &alex}); err != nil {
		t.Fatalf("a post once the other ended: %v", err)
	}
	if n := len(store.(*fairStore).perConversation.byKey); n != 0 {
		t.Fatalf("turns kept for %d conversations after every call ended", n)
	}
}
