package engine

import (
	"strings"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// trackerSynced merges the outcome of an outbox sync (engine/tasksync, run by
// reconcile/trackersync) into the state. Tracker trouble never blocks the GitHub side: the flow goes on regardless.
func (m *inputs) trackerSynced(e events.TrackerSynced) {
	if e.Enable && (m.S.TrackerEnabled == nil || !*m.S.TrackerEnabled) {
		on := true
		m.S.TrackerEnabled = &on
		m.Changed = true
	}
	byKey := map[string]state.Task{}
	for _, t := range e.Tasks {
		byKey[t.IdemKey] = t
	}
	for i, t := range m.S.Tasks {
		if u, ok := byKey[t.IdemKey]; ok && trackerSide(u) != trackerSide(t) {
			m.S.Tasks[i] = withTrackerSide(t, u)
			m.Changed = true
		}
	}
	if !e.RetryAt.Equal(m.S.TrackerRetryAt) {
		m.S.TrackerRetryAt = e.RetryAt
		m.Changed = true
	}
	switch {
	case e.Paused == tasksync.PausedAuth && e.Closing:
		// Paused like the outbox: no further tracker request from this issue
		// until `/autopilot tasks retry`, which also finishes the closes.
		if m.S.TrackerNote != outbox.PausedAuth {
			m.S.TrackerNote = outbox.PausedAuth
			m.Changed = true
		}
		m.notice("jira-close-auth", prose.TrackerCloseAuth(state.TrackerLabel(m.trackerInUse()), e.Left))
	case e.Paused == tasksync.PausedAuth:
		if m.S.TrackerNote != outbox.PausedAuth {
			m.S.TrackerNote = outbox.PausedAuth
			m.Changed = true
			if m.subIssues() {
				m.Post("reply", prose.SubIssuesRefused)
			} else {
				m.Post("reply", prose.JiraRefused)
			}
		}
	case e.Note != "" && e.Note != m.S.TrackerNote:
		m.S.TrackerNote = e.Note
		m.Changed = true
	case e.Note == "" && m.S.TrackerNote != "" && !m.HasPendingTasks():
		m.S.TrackerNote = ""
		m.Changed = true
	}
}

// tracked is what a sync may change on a task: where it stands in the
// tracker, the links made and what happened to its issue alone.
type tracked struct {
	Sync, Key, URL, Error, Gone, Remark string
	Done                                bool
	SentAt                              int64
	DepsLinked                          string
}

func trackerSide(t state.Task) tracked {
	return tracked{Sync: string(t.Sync), Key: t.Key, URL: t.URL, Error: t.Error, Gone: t.Gone, Remark: t.Remark,
		Done: t.Done, SentAt: t.SentAt.UnixNano(), DepsLinked: strings.Join(t.DepsLinked, "\x00")}
}

// withTrackerSide is t with the fields a sync owns taken from u; what the
// executor declared (title, epic, depends_on, ...) stays the state's.
func withTrackerSide(t, u state.Task) state.Task {
	t.Sync, t.Key, t.URL, t.Error, t.Gone, t.Remark = u.Sync, u.Key, u.URL, u.Error, u.Gone, u.Remark
	t.Done, t.SentAt, t.DepsLinked = u.Done, u.SentAt, u.DepsLinked
	return t
}

// PlanSync is outbox.PlanSync with the settings' tracker credentials.
func PlanSync(set machine.Settings, s *state.State, asked []events.Query, sweep bool) events.SyncPlan {
	return outbox.PlanSync(set.TrackerConfigured, s, asked, sweep)
}

// subIssues reports whether the tasks go to GitHub sub-issues (the config's
// tracker: github, or the answer C at the Jira authentication gate).
func (m *inputs) subIssues() bool {
	return m.S.Tracker == state.TrackerGitHub || (m.Set.Config != nil && m.Set.Config.Tracker == config.TrackerGitHub)
}

// trackerInUse is where the run's tasks go (State.TrackerInUse): GitHub
// sub-issues (subIssues), none when the run keeps its tasks here or the
// config says tracker: local, another registered tracker the config names
// (state.RegisterTracker), else Jira when it is configured or asked for
// (a jira: section), else none.
func (m *inputs) trackerInUse() state.Tracker {
	cfg := m.Set.Config
	switch {
	case m.subIssues():
		return state.TrackerGitHub
	case m.S.TrackerOff != "", cfg != nil && cfg.Tracker == config.TrackerLocal:
		return state.TrackerLocal
	case cfg != nil && !state.Tracker(cfg.Tracker).Builtin() && state.Tracker(cfg.Tracker).Valid():
		return state.Tracker(cfg.Tracker)
	case m.Set.TrackerConfigured, cfg != nil && (cfg.Tracker == config.TrackerJira || cfg.Jira != config.Jira{}):
		return state.TrackerJira
	}
	return state.TrackerLocal
}
