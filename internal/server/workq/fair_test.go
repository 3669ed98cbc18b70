package workq

import (
	"context"
	"fmt"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
)

// delivery is work on key of installation inst.
func delivery(id, key string, inst int64) Work {
	return Work{Key: key, Job: job.Job{Delivery: id, Event: &ghevent.Event{Installation: inst}}}
}

// takeIDs takes n jobs and returns their deliveries.
func takeIDs(t *testing.T, q *Queue, n int) []string {
	t.Helper()
	var out []string
	for range n {
		w, ok := q.Take(context.Background())
		if !ok {
			t.Fatal("take failed")
		}
		out = append(out, w.Job.Delivery)
	}
	return out
}

// TestTakeFavoursTheInstallationRunningFewest: installation 1 has ten
// issues waiting and two jobs running; installation 2's one delivery,
// queued after them all, is the next taken.
func TestTakeFavoursTheInstallationRunningFewest(t *testing.T) {
	q := New(100, nil)
	for i := range 10 {
		q.Push(delivery(fmt.Sprintf("a%d", i), fmt.Sprintf("o/r#%d", i), 1))
	}
	if got := takeIDs(t, q, 2); got[0] != "a0" || got[1] != "a1" {
		t.Fatalf("took %v first, want [a0 a1]", got)
	}
	q.Push(delivery("b", "o/s#1", 2))
	if got := takeIDs(t, q, 1); got[0] != "b" {
		t.Fatalf("took %s with installation 1 running two and installation 2 none, want b", got[0])
	}
	// Both running: installation 1 (two running) against 2 (one) — the
	// next is still 1's, as 2 has nothing waiting.
	if got := takeIDs(t, q, 1); got[0] != "a2" {
		t.Fatalf("took %s, want a2", got[0])
	}
}

// TestTakeRoundRobinsIssuesWithinAnInstallation: a key whose job finished
// goes behind the keys already waiting, so a busy issue takes turns with
// the others instead of running its backlog through.
func TestTakeRoundRobinsIssuesWithinAnInstallation(t *testing.T) {
	q := New(100, nil)
	for i := range 3 {
		q.Push(delivery(fmt.Sprintf("a%d", i), "o/r#1", 1))
	}
	q.Push(delivery("b0", "o/r#2", 1))
	q.Push(delivery("b1", "o/r#2", 1))
	q.Push(delivery("c0", "o/r#3", 1))
	var order []string
	for range 6 {
		w, _ := q.Take(context.Background())
		order = append(order, w.Job.Delivery)
		q.Done(w.Key)
	}
	if got, want := fmt.Sprint(order), "[a0 b0 c0 a1 b1 a2]"; got != want {
		t.Fatalf("one worker took %s, want %s", got, want)
	}
}

// TestTakeEqualShareBetweenBusyInstallations: two installations each with
// a backlog on many issues share the workers evenly.
func TestTakeEqualShareBetweenBusyInstallations(t *testing.T) {
	q := New(100, nil)
	for i := range 20 {
		q.Push(delivery(fmt.Sprintf("a%d", i), fmt.Sprintf("o/a#%d", i), 1))
	}
	for i := range 4 {
		q.Push(delivery(fmt.Sprintf("b%d", i), fmt.Sprintf("o/b#%d", i), 2))
	}
	got := takeIDs(t, q, 6)
	if want := "[a0 b0 a1 b1 a2 b2]"; fmt.Sprint(got) != want {
		t.Fatalf("six workers took %v, want %s", got, want)
	}
}
