package workq

import (
	"fmt"
	"testing"
)

// TestOneInstallationNeverHoldsMoreThanHalfTheWorkers: installation 1's
// flood over many issues is queued first and 8 workers are free; it starts
// 4 jobs and no more (its jobs write through one pacer per installation, so
// more of them at once only wait), and a delivery of installation 2 arriving
// afterwards starts on a free worker at once. When a flood job ends, the
// flood may take the freed place again.
func TestOneInstallationNeverHoldsMoreThanHalfTheWorkers(t *testing.T) {
	q := New(1000, nil)
	q.SetWorkers(8)
	for i := range 100 {
		q.Push(delivery(fmt.Sprintf("flood-%d", i), fmt.Sprintf("o/flood#%d", i), 1))
	}
	var running []Work
	for {
		w, ok := takeNow(t, q)
		if !ok {
			break
		}
		running = append(running, w)
	}
	if len(running) != 4 {
		t.Fatalf("installation 1 started %d jobs on 8 workers, want 4 (half)", len(running))
	}
	q.Push(delivery("answer", "o/other#1", 2))
	if w, ok := takeNow(t, q); !ok || w.Job.Delivery != "answer" {
		t.Fatalf("took %+v, %v: want installation 2's answer on a free worker", w, ok)
	}
	q.Done(running[0].Key)
	if w, ok := takeNow(t, q); !ok || w.Job.Event.Installation != 1 {
		t.Fatalf("took %+v, %v after a flood job ended: want the next flood job", w, ok)
	}
}

// TestTwoWorkersRunOneInstallationsIssuesSideBySide: the share is never
// below two jobs, so on a two-worker server one installation's two issues
// still run at once (a flood on one issue does not hold its other issue).
func TestTwoWorkersRunOneInstallationsIssuesSideBySide(t *testing.T) {
	q := New(10, nil)
	q.SetWorkers(2)
	q.Push(delivery("a", "o/r#1", 1))
	q.Push(delivery("b", "o/r#2", 1))
	q.Push(delivery("c", "o/r#3", 1))
	for _, want := range []string{"a", "b"} {
		if w, ok := takeNow(t, q); !ok || w.Job.Delivery != want {
			t.Fatalf("took %+v, %v: want %s", w, ok, want)
		}
	}
	if w, ok := takeNow(t, q); ok {
		t.Fatalf("started %+v as a third job of installation 1 on 2 workers, want its share of 2", w)
	}
}

// TestOneInstallationRunsAtMostTenantMaxJobs: with 128 workers one
// installation still starts only TenantMax jobs (two replicas of 128 would
// otherwise put 128 of its requests in flight, past GitHub's 100).
func TestOneInstallationRunsAtMostTenantMaxJobs(t *testing.T) {
	q := New(1000, nil)
	q.SetWorkers(128)
	for i := range 200 {
		q.Push(delivery(fmt.Sprintf("flood-%d", i), fmt.Sprintf("o/flood#%d", i), 1))
	}
	n := 0
	for {
		if _, ok := takeNow(t, q); !ok {
			break
		}
		n++
	}
	if n != TenantMax {
		t.Fatalf("installation 1 started %d jobs on 128 workers, want TenantMax (%d)", n, TenantMax)
	}
}
