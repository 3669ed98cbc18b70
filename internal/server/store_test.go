package server

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestQueueHandsOutOneJobPerKeyInArrivalOrder(t *testing.T) {
	q := newQueue(4, 0, nil)
	for _, w := range []work{
		{key: "a", job: Job{Delivery: "a1"}},
		{key: "a", job: Job{Delivery: "a2"}},
		{key: "b", job: Job{Delivery: "b1"}},
	} {
		if !q.reserve() {
			t.Fatal("reserve refused below the limit")
		}
		q.commit(w)
	}
	ctx := context.Background()
	first, _ := q.take(ctx)
	second, _ := q.take(ctx)
	if first.job.Delivery != "a1" || second.job.Delivery != "b1" {
		t.Fatalf("took %s then %s, want a1 then b1 (a2 waits for a1)", first.job.Delivery, second.job.Delivery)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if w, ok := q.take(short); ok {
		t.Fatalf("took %s while a1 was still running", w.job.Delivery)
	}
	q.done("a")
	third, ok := q.take(ctx)
	if !ok || third.job.Delivery != "a2" {
		t.Fatalf("after a1 finished took %q, want a2", third.job.Delivery)
	}
}

func TestQueueReservesCapacityBeforeCommit(t *testing.T) {
	var depth int
	q := newQueue(2, 0, func(n int) { depth = n })
	first, second := q.reserve(), q.reserve()
	if !first || !second {
		t.Fatal("reserve refused below the limit")
	}
	if q.reserve() {
		t.Fatal("reserve accepted past the limit")
	}
	q.unreserve()
	if depth != 1 || q.len() != 1 {
		t.Fatalf("depth = %d len = %d after unreserve, want 1", depth, q.len())
	}
	if !q.reserve() {
		t.Fatal("reserve refused after a slot was given back")
	}
	q.close()
	q.unreserve()
	if q.reserve() {
		t.Fatal("reserve accepted after close")
	}
}

func TestQueueCloseLetsWaitingJobsFinish(t *testing.T) {
	q := newQueue(4, 0, nil)
	for _, d := range []string{"x1", "x2"} {
		q.reserve()
		q.commit(work{key: "x", job: Job{Delivery: d}})
	}
	ctx := context.Background()
	w, _ := q.take(ctx)
	q.close()
	q.done(w.key)
	if w, ok := q.take(ctx); !ok || w.job.Delivery != "x2" {
		t.Fatalf("after close took %q ok=%v, want the waiting x2", w.job.Delivery, ok)
	}
	q.done("x")
	if _, ok := q.take(ctx); ok {
		t.Fatal("take returned a job from an empty closed queue")
	}
}

func TestMemoryDeduperRemembersForTheTTLThenForgets(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := NewMemoryDeduper(72*time.Hour, func() time.Time { return now })
	ctx := context.Background()
	if seen, _ := d.Seen(ctx, "x"); seen {
		t.Fatal("new id reported seen")
	}
	if seen, _ := d.Seen(ctx, "x"); !seen {
		t.Fatal("repeated id not reported seen")
	}
	now = now.Add(72*time.Hour - time.Second)
	if seen, _ := d.Seen(ctx, "x"); !seen {
		t.Fatal("id forgotten before the TTL")
	}
	now = now.Add(9*time.Hour + time.Second) // past TTL + TTL/8
	if seen, _ := d.Seen(ctx, "x"); seen {
		t.Fatal("id remembered past 9/8 of the TTL")
	}
	if d.Len() != 1 {
		t.Fatalf("Len = %d after expiry, want 1 (the id just recorded again)", d.Len())
	}
}

func TestMemoryDeduperBoundsMemory(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := NewMemoryDeduper(72*time.Hour, func() time.Time { return now })
	d.maxIDs = 10
	ctx := context.Background()
	for i := range 40 {
		d.Seen(ctx, fmt.Sprint(i))
		now = now.Add(3 * time.Hour) // a new generation every third id
	}
	if d.Len() > 10 {
		t.Fatalf("Len = %d, want at most the bound of 10", d.Len())
	}
	if seen, _ := d.Seen(ctx, "39"); !seen {
		t.Fatal("the newest id was dropped")
	}
}

// lockerContract checks what every Locker promises; the Redis test reuses it.
func lockerContract(t *testing.T, a, b Locker) {
	ctx := context.Background()
	la, err := a.Lock(ctx, "o/r#1")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(short, "o/r#1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock of a held key: err = %v, want it to wait until ctx ends", err)
	}
	other, err := b.Lock(ctx, "o/r#2")
	if err != nil {
		t.Fatalf("Lock of another key blocked: %v", err)
	}
	if err := la.Renew(ctx); err != nil {
		t.Fatalf("owner Renew: %v", err)
	}
	got := make(chan Lease, 1)
	go func() {
		l, err := b.Lock(ctx, "o/r#1")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	time.Sleep(20 * time.Millisecond)
	if err := la.Release(ctx); err != nil {
		t.Fatalf("owner Release: %v", err)
	}
	var lb Lease
	select {
	case lb = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not get the lease after release")
	}
	if lb.Token <= la.Token || other.Token <= la.Token {
		t.Fatalf("fencing tokens %d then %d, %d: want later leases to carry larger tokens", la.Token, lb.Token, other.Token)
	}
	if err := la.Release(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stale Release: err = %v, want ErrLeaseLost", err)
	}
	if err := la.Renew(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stale Renew: err = %v, want ErrLeaseLost", err)
	}
	short2, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if _, err := a.Lock(short2, "o/r#1"); err == nil {
		t.Fatal("stale Release freed the new holder's lease")
	}
	_ = lb.Release(ctx)
	_ = other.Release(ctx)
}

func TestMemoryLockerExclusiveFencedOwnerOnly(t *testing.T) {
	m := NewMemoryLocker()
	lockerContract(t, m, m)
}

// TestQueueTakeEntriesLeavesOtherWorkAndSkipsStaleKeys: at shutdown the
// Redis entries waiting in the local queue are taken out (running ones and
// sweeps stay); the keys they leave in the ready channel are skipped, and a
// key used again afterwards runs its new job once.
func TestQueueTakeEntriesLeavesOtherWorkAndSkipsStaleKeys(t *testing.T) {
	var depth int
	q := newQueue(4, 4, func(n int) { depth = n })
	ctx := context.Background()
	q.push(work{key: "i1", entry: "1-0", job: Job{Delivery: "e1"}})
	q.push(work{key: "i1", entry: "2-0", job: Job{Delivery: "e2"}}) // waits behind e1
	q.push(work{key: "i2", entry: "3-0", job: Job{Delivery: "e3"}})
	if !q.reserve() {
		t.Fatal("reserve refused")
	}
	q.commit(work{key: "sweep:1", sweep: 1})
	running, _ := q.take(ctx)
	if running.job.Delivery != "e1" {
		t.Fatalf("took %q first, want e1", running.job.Delivery)
	}
	got := map[string]bool{}
	for _, w := range q.takeEntries() {
		got[w.job.Delivery] = true
	}
	if len(got) != 2 || !got["e2"] || !got["e3"] {
		t.Fatalf("takeEntries = %v, want e2 and e3 (e1 runs)", got)
	}
	if depth != 1 || q.len() != 1 {
		t.Fatalf("depth %d len %d after takeEntries, want 1 (the sweep)", depth, q.len())
	}
	if w, ok := q.take(ctx); !ok || w.sweep != 1 {
		t.Fatalf("took %+v, want the sweep (i2's stale key skipped)", w)
	}
	q.push(work{key: "i2", entry: "4-0", job: Job{Delivery: "e4"}})
	if w, ok := q.take(ctx); !ok || w.job.Delivery != "e4" {
		t.Fatalf("took %q after i2 was used again, want e4", w.job.Delivery)
	}
	q.done("i1")
	q.done("sweep:1")
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if w, ok := q.take(short); ok {
		t.Fatalf("took %+v from a queue with nothing waiting", w)
	}
}
