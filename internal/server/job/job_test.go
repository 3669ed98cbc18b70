package job

import (
	"context"
	"testing"
	"time"
)

func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Fatal("Sleep on an ended context reported a full wait")
	}
	if !Sleep(context.Background(), time.Millisecond) {
		t.Fatal("Sleep of 1 ms reported its context ended")
	}
}

func TestEveryCallsUntilItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	done := make(chan struct{})
	go func() {
		Every(ctx, time.Millisecond, func() {
			calls++
			if calls == 3 {
				cancel()
			}
		})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context ended")
	}
	if calls < 3 {
		t.Fatalf("f called %d times before the end, want at least 3", calls)
	}
}
