package engine

import (
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// jiraSynced merges the outcome of an outbox sync into the state. Jira
// trouble never blocks the GitHub side: the flow goes on regardless.
func (m *inputs) jiraSynced(e JiraSynced) {
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
		if u, ok := byKey[t.IdemKey]; ok {
			if u.Sync != t.Sync || u.Key != t.Key || u.Done != t.Done || u.Error != t.Error || !u.SentAt.Equal(t.SentAt) {
				m.S.Tasks[i].Sync, m.S.Tasks[i].Key, m.S.Tasks[i].URL = u.Sync, u.Key, u.URL
				m.S.Tasks[i].Done, m.S.Tasks[i].Error, m.S.Tasks[i].SentAt = u.Done, u.Error, u.SentAt
				m.Changed = true
			}
		}
	}
	if !e.RetryAt.Equal(m.S.TrackerRetryAt) {
		m.S.TrackerRetryAt = e.RetryAt
		m.Changed = true
	}
	switch {
	case e.Paused == "auth" && e.Closing:
		// Paused like the outbox: no further tracker request from this issue
		// until `/autopilot tasks retry`, which also finishes the closes.
		if m.S.TrackerNote != PausedAuth {
			m.S.TrackerNote = PausedAuth
			m.Changed = true
		}
		m.notice("jira-close-auth", prose.TrackerCloseAuth(state.TrackerLabel(m.trackerInUse()), e.Left))
	case e.Paused == "auth":
		if m.S.TrackerNote != PausedAuth {
			m.S.TrackerNote = PausedAuth
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

// PausedAuth is outbox.PausedAuth, the state's TrackerNote while a 401
// pauses the tracker.
const PausedAuth = outbox.PausedAuth

// SyncPlan is whether a pass runs the tracker outbox (outbox.PlanSync).
type SyncPlan = outbox.SyncPlan

// PlanSync is outbox.PlanSync with the settings' tracker credentials.
func PlanSync(set Settings, s *state.State, asked []Query, sweep bool) SyncPlan {
	return outbox.PlanSync(set.JiraConfigured, s, asked, sweep)
}

// subIssues reports whether the tasks go to GitHub sub-issues (the config's
// tracker: github, or the answer C at the Jira authentication gate).
func (m *inputs) subIssues() bool {
	return m.S.Tracker == config.TrackerGitHub || (m.Set.Config != nil && m.Set.Config.Tracker == config.TrackerGitHub)
}

// trackerInUse is where the run's tasks go (State.TrackerInUse): GitHub
// sub-issues (subIssues), none when the run keeps its tasks here or the
// config says tracker: local, else Jira when it is configured or asked for
// (a jira: section), else none.
func (m *inputs) trackerInUse() string {
	cfg := m.Set.Config
	switch {
	case m.subIssues():
		return state.TrackerGitHub
	case m.S.TrackerOff != "", cfg != nil && cfg.Tracker == config.TrackerLocal:
		return state.TrackerLocal
	case m.Set.JiraConfigured, cfg != nil && (cfg.Tracker == config.TrackerJira || cfg.Jira != config.Jira{}):
		return state.TrackerJira
	}
	return state.TrackerLocal
}

// PendingCount is the number of tasks waiting for Jira
// (outbox.PendingCount); kept here for its many callers outside the engine.
func PendingCount(s *state.State) int { return outbox.PendingCount(s) }
