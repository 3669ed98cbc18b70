package tracker

import (
	"context"
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// fakeClock is the fake Jira's manual clock, recording each Sleep.
type fakeClock struct {
	*fakejira.Clock
	sleeps []time.Duration
}

func newClock() *fakeClock {
	return &fakeClock{Clock: fakejira.NewClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))}
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sleeps = append(c.sleeps, d)
	return c.Clock.Sleep(ctx, d)
}

// persister records every Persist call.
type persister struct {
	snapshots [][]state.Task
	err       error
	onPersist func([]state.Task)
}

func (p *persister) Persist(ts []state.Task) error {
	if p.onPersist != nil {
		p.onPersist(ts)
	}
	if p.err != nil {
		return p.err
	}
	p.snapshots = append(p.snapshots, ts)
	return nil
}

func task(id, kind, title, epic string) state.Task {
	return state.Task{
		ID: id, Kind: kind, Title: title, Epic: epic,
		IdemKey: idem.Key("octo/repo", 7, id), Sync: state.SyncPending,
	}
}

// manyTasks returns n pending tasks numbered from 01.
func manyTasks(n int) []state.Task {
	out := make([]state.Task, n)
	for i := range out {
		id := fmt.Sprintf("%02d", i+1)
		out[i] = task(id, state.KindTask, "Task "+id, "")
	}
	return out
}

func countOps(calls []SandboxCall, op string) int {
	n := 0
	for _, c := range calls {
		if c.Op == op {
			n++
		}
	}
	return n
}

func countJira(ts []state.Task, jira state.SyncState) int {
	n := 0
	for _, t := range ts {
		if t.Sync == jira {
			n++
		}
	}
	return n
}
