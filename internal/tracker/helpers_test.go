package tracker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// fakeClock is a manual clock whose Sleep advances time.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.t = c.t.Add(d)
	return ctx.Err()
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
		IdemKey: IdemKey("octo/repo", 7, id), Jira: state.JiraPending,
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

func countJira(ts []state.Task, jira string) int {
	n := 0
	for _, t := range ts {
		if t.Jira == jira {
			n++
		}
	}
	return n
}
