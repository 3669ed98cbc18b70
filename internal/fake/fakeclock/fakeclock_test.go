package fakeclock

import (
	"context"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func TestClockMovesOnlyForward(t *testing.T) {
	c := New(t0)
	c.Advance(time.Minute)
	c.Advance(-time.Hour)
	c.AdvanceTo(t0) // earlier: ignored
	if got := c.Now(); !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("now %s, want %s", got, t0.Add(time.Minute))
	}
	c.AdvanceTo(t0.Add(time.Hour))
	if err := c.Sleep(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if got := c.Now(); !got.Equal(t0.Add(time.Hour + time.Second)) {
		t.Fatalf("now %s, want %s", got, t0.Add(time.Hour+time.Second))
	}
}

func TestSleepFailsOnlyWhenTheContextIsDone(t *testing.T) {
	c := New(t0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); err == nil {
		t.Fatal("sleep on a cancelled context succeeded")
	}
	if !c.Now().Equal(t0) {
		t.Errorf("a failed sleep moved the clock to %s", c.Now())
	}
}

func TestConcurrentAdvancesAllCount(t *testing.T) {
	c := New(t0)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { c.Advance(time.Second) })
	}
	wg.Wait()
	if got := c.Now().Sub(t0); got != 50*time.Second {
		t.Errorf("moved %s, want 50s", got)
	}
}
