package outbox

import (
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// PausedAuth is the state's TrackerNote while a refused token (401) pauses
// the tracker: nothing is sent until `/autopilot jira retry`.
const PausedAuth = "paused: authentication failed"

// PlanSync decides whether this pass syncs the tasks with the tracker:
// when the engine asked for it (the events.QTrackerSync queries of the
// pass), tasks wait for it, or the sweep reads statuses back. An explicit `/autopilot
// tasks sync|retry` always may (it also turns the tracker back on); otherwise
// only while the tracker is enabled and not paused by a 401, so a refused token is
// tried once, not at every event. jiraConfigured: the tracker's
// credentials were supplied.
func PlanSync(jiraConfigured bool, s *state.State, asked []events.Query, sweep bool) events.SyncPlan {
	want, why := false, events.SyncAuto
	for _, q := range asked {
		if q.Kind != events.QTrackerSync {
			continue
		}
		want = true
		if q.Jira == events.SyncRetry || q.Jira == events.SyncAsked && why != events.SyncRetry {
			why = q.Jira
		}
	}
	explicit := why != events.SyncAuto
	if s == nil || !jiraConfigured || len(s.Tasks) == 0 || (s.TrackerEnabled == nil && !explicit) {
		return events.SyncPlan{Unconfigured: want && !jiraConfigured && s != nil}
	}
	enabled := s.TrackerEnabled != nil && *s.TrackerEnabled
	switch {
	case explicit:
	case !enabled, s.TrackerNote == PausedAuth:
		return events.SyncPlan{}
	case !want && tasksync.PendingCount(s) == 0 && !sweep:
		return events.SyncPlan{}
	}
	return events.SyncPlan{Run: true, Retry: why == events.SyncRetry, Enable: explicit && !enabled}
}

// ReadBack reports whether a pass reads the tasks' issues back although
// nothing waits and no sweep runs: with a tracker whose reads are cheap
// (Caps.ReadBack: GitHub sub-issues, whose whole tree is a few list
// requests) any event on the autopilot issue ticks the tasks
// whose issues were closed (docs/tasks.md "status comes back"), as long as
// one is still open (created, not done, not gone).
func ReadBack(s *state.State, tr tasksync.Caps) bool {
	if s == nil || !tr.ReadBack {
		return false
	}
	for _, t := range s.Tasks {
		if t.Closable() {
			return true
		}
	}
	return false
}

// PlanClose counts the tasks to move to done when the GitHub issue closed
// (PRODUCT §10) when the configuration asks for it for the issue's
// tracker (tr.CloseAsked: close_children with tracker: github,
// jira.transition_on_close with Jira); never while the tracker is off or
// paused by a refused token. 0: nothing to do. tracker: one is configured.
func PlanClose(cfg *config.Config, s *state.State, tracker bool, tr tasksync.Caps, closed bool) int {
	want := tr.CloseAsked(cfg)
	if s == nil || !tracker || !want || !closed {
		return 0
	}
	if s.TrackerEnabled == nil || !*s.TrackerEnabled || s.TrackerNote == PausedAuth {
		return 0
	}
	open := 0
	for _, t := range s.Tasks {
		if t.Closable() {
			open++
		}
	}
	return open
}
