package bench

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

func TestInBatchesLoadsEveryIndexOnce(t *testing.T) {
	var mu sync.Mutex
	var got []int
	var largest int
	err := inBatches(context.Background(), 47, 5, 3, func(_ context.Context, b []int) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, b...)
		largest = max(largest, len(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := make([]int, 47)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(got, want) || largest != 5 {
		t.Errorf("loaded %v in batches of at most %d; want 0..46 once each, batches of 5", got, largest)
	}
}

// Once a batch fails, no batch starts: the batches after the failing one
// wait for the load to be called off, so that a worker descheduled between
// its failure and the call-off cannot let the others race ahead, and at
// most one batch a worker is started after it.
func TestInBatchesStopsAtTheFirstError(t *testing.T) {
	broken := errors.New("copy failed")
	const workers = 2
	var calls atomic.Int64
	err := inBatches(context.Background(), 1000, 1, workers, func(ctx context.Context, b []int) error {
		calls.Add(1)
		switch {
		case b[0] == 3:
			return broken
		case b[0] > 3:
			<-ctx.Done()
		}
		return ctx.Err()
	})
	if !errors.Is(err, broken) {
		t.Errorf("error %v, want %v", err, broken)
	}
	if n := calls.Load(); n > 4+workers {
		t.Errorf("%d batches ran: the 4 up to the error, and more than one a worker after it", n)
	}
}
