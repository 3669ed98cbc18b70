package engine

import (
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// jiraSynced merges the outcome of an outbox sync into the state. Jira
// trouble never blocks the GitHub side: the flow goes on regardless.
func (m *machine) jiraSynced(e JiraSynced) {
	if e.Enable && (m.s.JiraEnabled == nil || !*m.s.JiraEnabled) {
		on := true
		m.s.JiraEnabled = &on
		m.changed = true
	}
	byKey := map[string]state.Task{}
	for _, t := range e.Tasks {
		byKey[t.IdemKey] = t
	}
	for i, t := range m.s.Tasks {
		if u, ok := byKey[t.IdemKey]; ok {
			if u.Jira != t.Jira || u.JiraKey != t.JiraKey || u.Done != t.Done || u.Error != t.Error || !u.SentAt.Equal(t.SentAt) {
				m.s.Tasks[i].Jira, m.s.Tasks[i].JiraKey, m.s.Tasks[i].JiraURL = u.Jira, u.JiraKey, u.JiraURL
				m.s.Tasks[i].Done, m.s.Tasks[i].Error, m.s.Tasks[i].SentAt = u.Done, u.Error, u.SentAt
				m.changed = true
			}
		}
	}
	if !e.RetryAt.Equal(m.s.JiraRetryAt) {
		m.s.JiraRetryAt = e.RetryAt
		m.changed = true
	}
	switch {
	case e.Paused == "auth" && e.Closing:
		// Paused like the outbox: no further Jira request from this issue
		// until `/autopilot jira retry`, which also finishes the closes.
		if m.s.JiraNote != PausedAuth {
			m.s.JiraNote = PausedAuth
			m.changed = true
		}
		m.notice("jira-close-auth", prose.JiraCloseAuth(e.Left))
	case e.Paused == "auth":
		if m.s.JiraNote != PausedAuth {
			m.s.JiraNote = PausedAuth
			m.changed = true
			if m.subIssues() {
				m.post("reply", prose.SubIssuesRefused)
			} else {
				m.post("reply", prose.JiraRefused)
			}
		}
	case e.Note != "" && e.Note != m.s.JiraNote:
		m.s.JiraNote = e.Note
		m.changed = true
	case e.Note == "" && m.s.JiraNote != "" && !m.hasPendingTasks():
		m.s.JiraNote = ""
		m.changed = true
	}
}

// PausedAuth is outbox.PausedAuth, the state's JiraNote while a 401
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
func (m *machine) subIssues() bool {
	return m.s.Tracker == config.TrackerGitHub || (m.set.Config != nil && m.set.Config.Tracker == config.TrackerGitHub)
}

// PendingCount is the number of tasks waiting for Jira
// (outbox.PendingCount); kept here for its many callers outside the engine.
func PendingCount(s *state.State) int { return outbox.PendingCount(s) }
