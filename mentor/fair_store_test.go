package mentor

import (
	"context"
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
	if n := len(store.(*fairStore).slots.byCaller); n != 0 {
		t.Fatalf("slots kept for %d callers after every call ended", n)
	}
}
