package jira

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// env is one adapter wired to one fake Jira on a fake clock.
type env struct {
	fj    *fakejira.Server
	clock *fakeclock.Clock
	c     *Client
	saved [][]state.Task
}

// setup starts a fake of the deployment and a client configured for it the
// way docs/jira.md tells a user to.
func setup(tb testing.TB, deployment string, fopt func(*fakejira.Options), copt func(*Config)) *env {
	tb.Helper()
	clock := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	o := fakejira.Options{Deployment: deployment, Now: clock.Now}
	if fopt != nil {
		fopt(&o)
	}
	fj := fakejira.New(o)
	tb.Cleanup(fj.Close)
	fo := fj.Options()
	cfg := Config{
		URL: fj.URL(), Token: fo.Token, Project: fo.Project, Deployment: deployment,
		PointsField: fo.PointsField, HTTPClient: fj.Client(), Now: clock.Now,
	}
	if deployment == fakejira.Cloud {
		cfg.User = fo.User
	} else {
		cfg.EpicLinkField, cfg.EpicNameField = fo.EpicLinkField, fo.EpicNameField
	}
	if copt != nil {
		copt(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return &env{fj: fj, clock: clock, c: c}
}

func (e *env) opts() trackersync.Options {
	return trackersync.Options{
		Now: e.clock.Now, Sleep: e.clock.Sleep, Rand: func() float64 { return 0.5 },
		Persist: func(ts []state.Task) error { e.saved = append(e.saved, ts); return nil },
	}
}

func (e *env) sync(tb testing.TB, ts []state.Task, mod func(*trackersync.Options)) tasksync.Result {
	tb.Helper()
	o := e.opts()
	if mod != nil {
		mod(&o)
	}
	res, err := trackersync.Outbox(context.Background(), e.c, ts, o)
	if err != nil {
		tb.Fatalf("Sync: %v", err)
	}
	return res
}

func mkTask(id string, kind state.TaskKind, title, epic string, points float64) state.Task {
	return state.Task{
		ID: id, Kind: kind, Title: title, Epic: epic, Points: points,
		Description: "Plain text description of " + title,
		IdemKey:     idem.Key("octo/repo", 42, id), Sync: state.SyncPending,
	}
}

func tasksN(n int) []state.Task {
	out := make([]state.Task, n)
	for i := range out {
		id := fmt.Sprintf("%02d", i+1)
		out[i] = mkTask(id, state.KindTask, "Task "+id, "", 0)
	}
	return out
}

// onePerKey fails unless every task has exactly one issue in the fake.
func onePerKey(tb testing.TB, fj *fakejira.Server, ts []state.Task) {
	tb.Helper()
	for _, t := range ts {
		if n := fj.CountLabel(t.IdemKey); n != 1 {
			tb.Errorf("task %s (%s): %d issues, want exactly 1", t.ID, t.IdemKey, n)
		}
	}
}

var deployments = []string{fakejira.Cloud, fakejira.DataCenter}

// noRequestInsideRetryAfter fails when a request reached the fake inside the
// Retry-After window of an earlier answer, and returns how many windows the
// log holds.
func noRequestInsideRetryAfter(tb testing.TB, log []fakejira.Request) int {
	tb.Helper()
	windows, broken := fakejira.RetryAfterWindows(log)
	for _, b := range broken {
		tb.Error(b)
	}
	return windows
}
