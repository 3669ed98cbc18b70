package codec

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

// tasksSection is the Tasks section of a rendered state.
func tasksSection(t *testing.T, s *state.State) string {
	t.Helper()
	body := mustRender(t, s, nil)
	_, after, _ := strings.Cut(body, "### Tasks\n")
	before, _, _ := strings.Cut(after, "<!-- autopilot:data")
	return before
}

// TestTasksSectionNamesTheTrackerInUse: the Tasks section speaks of the
// tracker the run uses (State.TrackerInUse): "Jira" only for Jira,
// "GitHub" for sub-issues, no tracker name at all for tasks kept here, and
// the tracker-neutral command in every hint.
func TestTasksSectionNamesTheTrackerInUse(t *testing.T) {
	pending := func(tracker state.Tracker) *state.State {
		s := statetest.Sample()
		s.TrackerInUse = tracker
		on := true
		s.TrackerEnabled, s.TrackerNote = &on, ""
		s.Tasks[0].Key, s.Tasks[0].URL = "", ""
		s.Tasks[0].Sync = state.SyncPending
		return s
	}
	github := tasksSection(t, pending(state.TrackerGitHub))
	for _, w := range []string{"GitHub: pending (4)", "— GitHub: pending", "— GitHub: failed — field 'priority' is required", "— GitHub: sending"} {
		if !strings.Contains(github, w) {
			t.Errorf("github: Tasks section lacks %q:\n%s", w, github)
		}
	}
	jira := tasksSection(t, pending(state.TrackerJira))
	for _, w := range []string{"Jira: pending (4)", "— Jira: pending", "— Jira: failed — field 'priority' is required"} {
		if !strings.Contains(jira, w) {
			t.Errorf("jira: Tasks section lacks %q:\n%s", w, jira)
		}
	}
	off := pending(state.TrackerJira)
	no := false
	off.TrackerEnabled = &no
	if sec := tasksSection(t, off); !strings.Contains(sec, "Jira: disabled — tasks are kept here until `/autopilot tasks sync`") {
		t.Errorf("declined Jira:\n%s", sec)
	}
	local := pending(state.TrackerLocal)
	local.TrackerEnabled, local.TrackerOff = &no, state.TrackerNotConfigured
	for i := range local.Tasks {
		local.Tasks[i].Sync, local.Tasks[i].Error = state.SyncLocal, ""
	}
	sec := tasksSection(t, local)
	for _, w := range []string{"kept here (no tracker)", "`tracker: github`", "`/autopilot tasks sync`"} {
		if !strings.Contains(sec, w) {
			t.Errorf("local: Tasks section lacks %q:\n%s", w, sec)
		}
	}
	for name, sec := range map[string]string{"github": github, "local": sec} {
		if strings.Contains(sec, "Jira:") || strings.Contains(sec, "/autopilot jira") {
			t.Errorf("%s: Tasks section speaks of Jira:\n%s", name, sec)
		}
	}
}
