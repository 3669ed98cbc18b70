package workq

import (
	"context"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
)

func TestQueueHandsOutOneJobPerKeyInArrivalOrder(t *testing.T) {
	q := New(4, nil)
	for _, w := range []Work{
		{Key: "a", Job: job.Job{Delivery: "a1"}},
		{Key: "a", Job: job.Job{Delivery: "a2"}},
		{Key: "b", Job: job.Job{Delivery: "b1"}},
	} {
		if !q.Reserve() {
			t.Fatal("reserve refused below the limit")
		}
		q.Commit(w)
	}
	ctx := context.Background()
	first, _ := q.Take(ctx)
	second, _ := q.Take(ctx)
	if first.Job.Delivery != "a1" || second.Job.Delivery != "b1" {
		t.Fatalf("took %s then %s, want a1 then b1 (a2 waits for a1)", first.Job.Delivery, second.Job.Delivery)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if w, ok := q.Take(short); ok {
		t.Fatalf("took %s while a1 was still running", w.Job.Delivery)
	}
	q.Done("a")
	third, ok := q.Take(ctx)
	if !ok || third.Job.Delivery != "a2" {
		t.Fatalf("after a1 finished took %q, want a2", third.Job.Delivery)
	}
}

func TestQueueReservesCapacityBeforeCommit(t *testing.T) {
	var depth int
	q := New(2, func(n int) { depth = n })
	first, second := q.Reserve(), q.Reserve()
	if !first || !second {
		t.Fatal("reserve refused below the limit")
	}
	if q.Reserve() {
		t.Fatal("reserve accepted past the limit")
	}
	q.Unreserve()
	if depth != 1 || q.Len() != 1 {
		t.Fatalf("depth = %d len = %d after unreserve, want 1", depth, q.Len())
	}
	if !q.Reserve() {
		t.Fatal("reserve refused after a slot was given back")
	}
	q.Close()
	q.Unreserve()
	if q.Reserve() {
		t.Fatal("reserve accepted after close")
	}
}

func TestQueueCloseLetsWaitingJobsFinish(t *testing.T) {
	q := New(4, nil)
	for _, d := range []string{"x1", "x2"} {
		q.Reserve()
		q.Commit(Work{Key: "x", Job: job.Job{Delivery: d}})
	}
	ctx := context.Background()
	w, _ := q.Take(ctx)
	q.Close()
	q.Done(w.Key)
	if w, ok := q.Take(ctx); !ok || w.Job.Delivery != "x2" {
		t.Fatalf("after close took %q ok=%v, want the waiting x2", w.Job.Delivery, ok)
	}
	q.Done("x")
	if _, ok := q.Take(ctx); ok {
		t.Fatal("take returned a job from an empty closed queue")
	}
}

// TestQueueTakeEntriesLeavesOtherWorkAndSkipsStaleKeys: at shutdown the
// Redis entries waiting in the local queue are taken out (running ones and
// sweeps stay); the keys they leave in the ready channel are skipped, and a
// key used again afterwards runs its new job once.
func TestQueueTakeEntriesLeavesOtherWorkAndSkipsStaleKeys(t *testing.T) {
	var depth int
	q := New(4, func(n int) { depth = n })
	ctx := context.Background()
	q.Push(Work{Key: "i1", Entry: "1-0", Job: job.Job{Delivery: "e1"}})
	q.Push(Work{Key: "i1", Entry: "2-0", Job: job.Job{Delivery: "e2"}}) // waits behind e1
	q.Push(Work{Key: "i2", Entry: "3-0", Job: job.Job{Delivery: "e3"}})
	if !q.Reserve() {
		t.Fatal("reserve refused")
	}
	q.Commit(Work{Key: "sweep:1", Sweep: 1})
	running, _ := q.Take(ctx)
	if running.Job.Delivery != "e1" {
		t.Fatalf("took %q first, want e1", running.Job.Delivery)
	}
	got := map[string]bool{}
	for _, w := range q.TakeEntries() {
		got[w.Job.Delivery] = true
	}
	if len(got) != 2 || !got["e2"] || !got["e3"] {
		t.Fatalf("takeEntries = %v, want e2 and e3 (e1 runs)", got)
	}
	if depth != 1 || q.Len() != 1 {
		t.Fatalf("depth %d len %d after takeEntries, want 1 (the sweep)", depth, q.Len())
	}
	if w, ok := q.Take(ctx); !ok || w.Sweep != 1 {
		t.Fatalf("took %+v, want the sweep (i2's stale key skipped)", w)
	}
	q.Push(Work{Key: "i2", Entry: "4-0", Job: job.Job{Delivery: "e4"}})
	if w, ok := q.Take(ctx); !ok || w.Job.Delivery != "e4" {
		t.Fatalf("took %q after i2 was used again, want e4", w.Job.Delivery)
	}
	q.Done("i1")
	q.Done("sweep:1")
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if w, ok := q.Take(short); ok {
		t.Fatalf("took %+v from a queue with nothing waiting", w)
	}
}
