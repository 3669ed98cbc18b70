package tasksync

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// t0 is the time every transcript starts at.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// step is one line of a transcript: the op the rules must name next, and
// the outcome the tracker gives it.
type step struct {
	op  string
	out Outcome
}

type machine interface {
	Next() Op
	Apply(Outcome)
}

// play runs the machine through the transcript: every op named must be the
// next line's, and after the last line the machine must be done.
func play(t *testing.T, m machine, steps []step) {
	t.Helper()
	for n, st := range steps {
		op := m.Next()
		if op == nil {
			t.Fatalf("line %d: the rules are done, want %q", n+1, st.op)
		}
		if got := render(op); got != st.op {
			t.Fatalf("line %d: op %q, want %q", n+1, got, st.op)
		}
		if st.out.At.IsZero() {
			st.out.At = t0
		}
		m.Apply(st.out)
	}
	if op := m.Next(); op != nil {
		t.Fatalf("after the transcript the rules still ask for %q", render(op))
	}
}

// render is an op as a transcript line.
func render(op Op) string {
	switch op := op.(type) {
	case Lookup:
		return "lookup " + strings.Join(op.IdemKeys, " ")
	case Persist:
		var sending []string
		for _, t := range op.Tasks {
			if t.Sync == state.SyncSending {
				sending = append(sending, t.ID)
			}
		}
		return "persist sending " + strings.Join(sending, " ")
	case Create:
		var items []string
		for _, it := range op.Items {
			s := it.IdemKey
			if it.EpicKey != "" {
				s += "(epic " + it.EpicKey + ")"
			}
			items = append(items, s)
		}
		return "create " + strings.Join(items, " ")
	case LinkDep:
		return "link " + op.Key + " blocked by " + op.Blocker
	case ReadStatuses:
		return "statuses " + strings.Join(op.Keys, " ")
	case CloseIssue:
		return "close " + op.Key
	case Wait:
		return "wait " + op.D.String()
	}
	return fmt.Sprintf("%T", op)
}

// task is a pending task whose idempotency key is "k" + id.
func task(id string, kind state.TaskKind, title, epic string) state.Task {
	return state.Task{ID: id, Kind: kind, Title: title, Epic: epic, IdemKey: "k" + id, Sync: state.SyncPending}
}

func tasks(n int) []state.Task {
	out := make([]state.Task, n)
	for i := range out {
		id := fmt.Sprintf("%02d", i+1)
		out[i] = task(id, state.KindTask, "Task "+id, "")
	}
	return out
}

// created is a task whose issue key exists.
func created(id, key string) state.Task {
	t := task(id, state.KindTask, "Task "+id, "")
	t.Sync, t.Key = state.SyncCreated, key
	return t
}

// createdAll answers a Create with every item created, keys A-<n> from n.
func createdAll(ids []string, n int) Outcome {
	var rs []ItemResult
	for i, id := range ids {
		rs = append(rs, ItemResult{IdemKey: id, Issue: Issue{Key: fmt.Sprintf("A-%d", n+i)}})
	}
	return Outcome{Results: rs}
}

func refused(c Class, msg string) Outcome { return Outcome{Err: &Refusal{Class: c, Msg: msg}} }

func newSync(t *testing.T, ts []state.Task, o Options) *Sync {
	t.Helper()
	if o.Now.IsZero() {
		o.Now = t0
	}
	if o.Name == "" {
		o.Name = "Jira"
	}
	s, err := NewSync(ts, o)
	if err != nil {
		t.Fatalf("NewSync: %v", err)
	}
	return s
}

func syncState(ts []state.Task) string {
	var out []string
	for _, t := range ts {
		s := t.ID + ":" + string(t.Sync)
		if t.Key != "" {
			s += "=" + t.Key
		}
		if t.Done {
			s += "+done"
		}
		if t.Gone != "" {
			s += "+" + t.Gone
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}
