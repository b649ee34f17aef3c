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

func TestInBatchesStopsAtTheFirstError(t *testing.T) {
	broken := errors.New("copy failed")
	var calls atomic.Int64
	err := inBatches(context.Background(), 1000, 1, 2, func(ctx context.Context, b []int) error {
		calls.Add(1)
		if b[0] == 3 {
			return broken
		}
		return ctx.Err()
	})
	if !errors.Is(err, broken) {
		t.Errorf("error %v, want %v", err, broken)
	}
	if n := calls.Load(); n > 10 {
		t.Errorf("%d batches ran after the error", n)
	}
}
