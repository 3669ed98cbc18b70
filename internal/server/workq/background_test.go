package workq

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// sweep is background work: a sweep of installation inst.
func sweep(inst int64) Work {
	return Work{Key: fmt.Sprintf("sweep:%d", inst), Sweep: inst}
}

// takeNow takes a job that is ready now, or reports none.
func takeNow(t *testing.T, q *Queue) (Work, bool) {
	t.Helper()
	return q.tryTake()
}

// TestAnswerStartsBeforeReadySweepsOfOtherInstallations: installation 1
// already ran a job; 100 sweeps of installations that never started one
// are ready, then installation 1's answer arrives: the next free worker
// takes the answer, not the sweeps (before, an installation that never
// started a job went first, so every sweep of the start ran ahead of it).
func TestAnswerStartsBeforeReadySweepsOfOtherInstallations(t *testing.T) {
	q := New(100, nil)
	q.SetWorkers(4)
	q.Push(delivery("earlier", "o/r#1", 1))
	w, _ := q.Take(context.Background())
	q.Done(w.Key)
	for inst := range int64(100) {
		if !q.Background(sweep(2 + inst)) {
			t.Fatalf("sweep of %d refused", 2+inst)
		}
	}
	q.Push(delivery("answer", "o/r#2", 1))
	if w, ok := takeNow(t, q); !ok || w.Job.Delivery != "answer" {
		t.Fatalf("took %+v with 100 sweeps and one answer ready, want the answer", w)
	}
}

// TestSweepsNeverExceedTheirShareOfTheWorkers: with 4 workers at most 2
// sweeps run at once, though more are ready and workers are free; a
// delivery still starts at once, and a finished sweep lets the next one
// start.
func TestSweepsNeverExceedTheirShareOfTheWorkers(t *testing.T) {
	q := New(100, nil)
	q.SetWorkers(4)
	for inst := range int64(10) {
		q.Background(sweep(1 + inst))
	}
	a, _ := takeNow(t, q)
	b, _ := takeNow(t, q)
	if a.Sweep == 0 || b.Sweep == 0 {
		t.Fatalf("took %+v and %+v, want two sweeps (nothing else is ready)", a, b)
	}
	if w, ok := takeNow(t, q); ok {
		t.Fatalf("took %+v with 2 of 4 workers sweeping, want nothing (sweeps are held to half the workers)", w)
	}
	q.Push(delivery("answer", "o/r#1", 50))
	if w, ok := takeNow(t, q); !ok || w.Job.Delivery != "answer" {
		t.Fatalf("took %+v, want the answer", w)
	}
	q.Done(a.Key)
	if w, ok := takeNow(t, q); !ok || w.Sweep == 0 {
		t.Fatalf("took %+v after a sweep finished, want the next sweep", w)
	}
	if w, ok := takeNow(t, q); ok {
		t.Fatalf("took %+v, want nothing (2 sweeps run again)", w)
	}
}

// TestOneWorkerMaySweep: the share is at least one worker.
func TestOneWorkerMaySweep(t *testing.T) {
	q := New(100, nil)
	q.SetWorkers(1)
	q.Background(sweep(1))
	if w, ok := takeNow(t, q); !ok || w.Sweep != 1 {
		t.Fatalf("took %+v, want the sweep", w)
	}
}

// TestSweepWaitingLongUnderSteadyInteractiveLoadStarts: deliveries are
// always ready, so a sweep never finds the workers free of them; once it
// has waited BackgroundWait, the next free worker takes it — one such
// sweep at a time — and then deliveries again.
func TestSweepWaitingLongUnderSteadyInteractiveLoadStarts(t *testing.T) {
	now := time.Unix(1000, 0)
	q := New(1000, nil)
	q.now = func() time.Time { return now }
	q.SetWorkers(2)
	q.Background(sweep(7))
	q.Background(sweep(8))
	n := 0
	deliver := func() {
		q.Push(delivery(fmt.Sprintf("d%d", n), fmt.Sprintf("o/r#%d", n), int64(100+n)))
		n++
	}
	deliver()
	deliver()
	for range 5 { // a steady stream: one finishes, one arrives
		w, ok := takeNow(t, q)
		if !ok || w.Sweep != 0 {
			t.Fatalf("took %+v before the sweeps waited %s, want a delivery", w, BackgroundWait)
		}
		q.Done(w.Key)
		deliver()
		now = now.Add(BackgroundWait / 10)
	}
	now = now.Add(BackgroundWait)
	first, ok := takeNow(t, q)
	if !ok || first.Sweep == 0 {
		t.Fatalf("took %+v after the sweeps waited past %s, want a sweep", first, BackgroundWait)
	}
	if w, ok := takeNow(t, q); !ok || w.Sweep != 0 {
		t.Fatalf("took %+v while one waited-out sweep runs, want a delivery (one at a time)", w)
	}
	q.Done(first.Key)
	if w, ok := takeNow(t, q); !ok || w.Sweep == 0 || w.Sweep == first.Sweep {
		t.Fatalf("took %+v after the first sweep finished, want the other sweep", w)
	}
}

// TestIdleWorkerWakesForADeliveryWhileSweepsAreHeld: a worker waiting
// while the ready sweeps are at their share takes a delivery pushed after.
func TestIdleWorkerWakesForADeliveryWhileSweepsAreHeld(t *testing.T) {
	q := New(100, nil)
	q.SetWorkers(2)
	q.Background(sweep(1))
	q.Background(sweep(2))
	if w, ok := takeNow(t, q); !ok || w.Sweep == 0 {
		t.Fatalf("took %+v, want a sweep", w)
	}
	got := make(chan Work)
	go func() {
		w, _ := q.Take(context.Background())
		got <- w
	}()
	q.Push(delivery("answer", "o/r#1", 3))
	select {
	case w := <-got:
		if w.Job.Delivery != "answer" {
			t.Fatalf("the waiting worker took %+v, want the answer", w)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting worker never took the answer")
	}
}

// TestBackgroundKeepsOneWaitingPerKeyOutsideTheDeliveriesRoom: a second
// sweep of an installation whose sweep still waits is refused, and sweeps
// never take the room deliveries are accepted into.
func TestBackgroundKeepsOneWaitingPerKeyOutsideTheDeliveriesRoom(t *testing.T) {
	q := New(2, nil)
	q.SetWorkers(2)
	for inst := range int64(5) {
		if !q.Background(sweep(1 + inst)) {
			t.Fatalf("sweep of %d refused", 1+inst)
		}
	}
	if q.Background(sweep(1)) {
		t.Fatal("a second sweep of installation 1 was queued while the first waits")
	}
	if first, second := q.Reserve(), q.Reserve(); !first || !second {
		t.Fatal("5 waiting sweeps took the room of the deliveries")
	}
	running, _ := takeNow(t, q)
	if !q.Background(sweep(running.Sweep)) {
		t.Fatalf("a sweep of %d refused while the previous one runs (not waits)", running.Sweep)
	}
}
