package tasksync

import (
	"fmt"
	"slices"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// okOutcome answers op as an always-succeeding tracker would: nothing
// found by idempotency key, every item created, every link and close done
// (an existing link answers nil too), every wait sat out.
func okOutcome(op Op, next *int) Outcome {
	out := Outcome{At: t0}
	if c, ok := op.(Create); ok {
		for _, it := range c.Items {
			*next++
			out.Results = append(out.Results, ItemResult{IdemKey: it.IdemKey, Issue: Issue{Key: fmt.Sprintf("A-%d", *next)}})
		}
	}
	return out
}

// driveOK runs m against okOutcome for at most limit ops; it returns the
// ops named and whether m ended within the bound.
func driveOK(m machine, limit int) (ops []Op, done bool) {
	next := 100
	for range limit {
		op := m.Next()
		if op == nil {
			return ops, true
		}
		ops = append(ops, op)
		m.Apply(okOutcome(op, &next))
	}
	return ops, m.Next() == nil
}

func TestASpacedDependencyEntryIsLinkedOnceAndTheSyncEnds(t *testing.T) {
	a, b := created("01", "A-1"), created("02", "A-2")
	b.DependsOn = []string{" 01 ", "Task 01"}
	s := newSync(t, []state.Task{a, b}, Options{DependencyLinks: true})
	ops, done := driveOK(s, 20)
	if !done {
		t.Fatalf("the sync did not end; ops: %v", ops)
	}
	links := 0
	for _, op := range ops {
		if _, ok := op.(LinkDep); ok {
			links++
		}
	}
	// One link per entry: both entries name task 01, each is linked once.
	if links != 2 {
		t.Errorf("%d links sent, want 2; ops %v", links, ops)
	}
	if res := s.Result(Extras{}); res.Waiting != 0 {
		t.Errorf("waiting %d, want 0", res.Waiting)
	}
}

func TestADependencyLinkedBeforeWithSpacesIsNotSentAgain(t *testing.T) {
	a, b := created("01", "A-1"), created("02", "A-2")
	b.DependsOn = []string{"01"}
	b.DepsLinked = []string{" 01"} // recorded by an older version
	s := newSync(t, []state.Task{a, b}, Options{DependencyLinks: true})
	play(t, s, []step{{op: "statuses A-1 A-2"}})
}

// depRefs are the depends_on entries the fuzz target draws from, relative
// to task i of n: ids, spaced ids, titles in another case, the task
// itself, unknown names and tracker keys.
func depRef(b byte, i, n int) string {
	j := int(b>>3) % n
	id := fmt.Sprintf("%02d", j+1)
	switch b % 8 {
	case 0:
		return id
	case 1:
		return "  " + id + "\t"
	case 2:
		return "task " + id
	case 3:
		return fmt.Sprintf("%02d", i+1) // itself
	case 4:
		return "nobody"
	case 5:
		return "PROJ-7"
	case 6:
		return ""
	default:
		return " TASK " + id + " "
	}
}

// tasksFrom builds up to 8 tasks from data: kind, epic reference, sync
// state, gone, depends_on and deps already linked.
func tasksFrom(data []byte) []state.Task {
	if len(data) == 0 {
		return nil
	}
	n := int(data[0])%8 + 1
	data = data[1:]
	at := func(k int) byte {
		if len(data) == 0 {
			return 0
		}
		return data[k%len(data)]
	}
	out := make([]state.Task, n)
	for i := range out {
		b := at(i * 5)
		id := fmt.Sprintf("%02d", i+1)
		kind := state.KindTask
		if b&1 == 1 {
			kind = state.KindEpic
		}
		epic := ""
		switch (b >> 1) % 4 {
		case 1:
			epic = fmt.Sprintf("%02d", int(at(i*5+1))%n+1)
		case 2:
			epic = " Task " + fmt.Sprintf("%02d", int(at(i*5+1))%n+1)
		case 3:
			epic = "PROJ-3"
		}
		t := task(id, kind, "Task "+id, epic)
		switch (b >> 3) % 6 {
		case 1:
			t.Sync, t.SentAt = state.SyncSending, t0.Add(-DefaultSearchLag*2)
		case 2:
			t.Sync, t.SentAt = state.SyncSending, t0
		case 3:
			t.Sync, t.Key = state.SyncCreated, "A-"+id
		case 4:
			t.Sync, t.Error = state.SyncFailed, "rejected"
		case 5:
			t.Sync, t.Key, t.Gone = state.SyncCreated, "A-"+id, state.IssueDeleted
		}
		deps := int(at(i*5+2)) % 5
		for k := range deps {
			t.DependsOn = append(t.DependsOn, depRef(at(i*5+3+k), i, n))
		}
		if b>>6 == 1 && len(t.DependsOn) > 0 {
			t.DepsLinked = []string{" " + t.DependsOn[0] + " "}
		}
		out[i] = t
	}
	return out
}

// terminates checks that both machines end against an always-succeeding
// tracker within a bound that grows with the work, and that no link is
// sent twice for the same entry.
func terminates(t *testing.T, ts []state.Task) {
	t.Helper()
	links := 0
	for _, tk := range ts {
		links += len(tk.DependsOn)
	}
	limit := 4*len(ts) + 2*links + 16
	for _, dl := range []bool{false, true} {
		s, err := NewSync(ts, Options{Now: t0, DependencyLinks: dl})
		if err != nil {
			t.Fatalf("NewSync: %v", err)
		}
		ops, done := driveOK(s, limit)
		if !done {
			t.Fatalf("sync (links %v) did not end after %d ops; last %#v; tasks %+v", dl, len(ops), ops[len(ops)-1], ts)
		}
		var sent []LinkDep
		for _, op := range ops {
			if l, ok := op.(LinkDep); ok {
				sent = append(sent, l)
			}
		}
		if len(sent) > links {
			t.Fatalf("%d links sent for %d entries: %v", len(sent), links, sent)
		}
		res := s.Result(Extras{})
		c := NewClose(res.Tasks, Options{Now: t0})
		if ops, done := driveOK(c, limit); !done {
			t.Fatalf("close did not end after %d ops", len(ops))
		}
		if dl && res.Waiting != 0 && !slices.ContainsFunc(res.Tasks, func(tk state.Task) bool { return inOutbox(tk) }) {
			t.Fatalf("an always-succeeding tracker left %d tasks owing links: %+v", res.Waiting, res.Tasks)
		}
	}
}

func TestSyncEndsForVariedTaskSets(t *testing.T) {
	for seed := range 2000 {
		data := []byte{byte(seed), byte(seed >> 3), byte(seed * 7), byte(seed * 13), byte(seed >> 5), 0x41, byte(seed * 31), 0x0a, byte(seed * 5)}
		terminates(t, tasksFrom(data))
	}
}

func FuzzSyncEnds(f *testing.F) {
	f.Add([]byte{2, 0x18, 0, 1, 1})
	f.Add([]byte{3, 0x18, 0, 3, 9, 17, 0x19, 1, 2, 3, 5})
	f.Add([]byte{7, 0x41, 0x20, 4, 1, 2, 3, 4, 7, 9, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		terminates(t, tasksFrom(data))
	})
}
