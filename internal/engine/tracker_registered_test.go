package engine

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestARegisteredTrackerIsRecordedByItsOwnName: a tracker beyond jira,
// github and local that a registration adds is stored as the config names
// it and worded by its registration, not taken for Jira; the three keep
// their values and words.
func TestARegisteredTrackerIsRecordedByItsOwnName(t *testing.T) {
	config.RegisterTracker("enginetest")
	state.RegisterTracker("enginetest", "Enginetest")
	for _, tc := range []struct {
		name, cfg  string
		configured bool
		want       state.Tracker
		label      string
		auth       string
	}{
		{"registered", "tracker: enginetest\n" + jiraOff, true, "enginetest", "Enginetest", "checking Enginetest authentication"},
		{"registered, no jira credentials", "tracker: enginetest\n" + jiraOff, false, "enginetest", "Enginetest", "checking Enginetest authentication"},
		{"jira", "tracker: jira\n" + jiraOff, true, state.TrackerJira, "Jira", "checking Jira authentication"},
		{"github", "tracker: github\n" + jiraOff, true, state.TrackerGitHub, "GitHub", "checking access to GitHub sub-issues"},
		{"local", "tracker: local\n" + jiraOff, true, state.TrackerLocal, "Tasks", "checking Jira authentication"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg)
			h.set.TrackerConfigured = tc.configured
			h.runTo("greenfield", "decompose")
			c := h.comment("maria", "write", "/autopilot done tasks")
			c.Declared = []state.Task{{Kind: state.KindTask, Title: "a"}}
			res := h.apply(c)
			want(t, "tracker in use", res.State.TrackerInUse, tc.want)
			want(t, "label", state.TrackerLabel(res.State.TrackerInUse), tc.label)
			s := *res.State
			s.Run, s.PendingAuthCheck, s.Gate, s.Exec = state.RunInProgress, true, nil, nil
			if got := prose.NextAction(&s); got != tc.auth {
				t.Errorf("auth check worded %q, want %q", got, tc.auth)
			}
		})
	}
}
