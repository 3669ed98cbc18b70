package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestTasksCommandsAndTheirJiraAliases: `/autopilot tasks retry|sync` are
// the tracker-neutral names; the `jira …` forms are the same commands.
func TestTasksCommandsAndTheirJiraAliases(t *testing.T) {
	for _, tc := range []struct{ retry, sync string }{
		{"/autopilot tasks retry", "/autopilot tasks sync"},
		{"/autopilot jira retry", "/autopilot jira sync"},
	} {
		t.Run(tc.sync, func(t *testing.T) {
			h := newHarness(t, jiraWanted)
			toPlan(t, h)
			res := h.say("maria", tc.retry)
			want(t, "decision", res.Decision, "A")
			want(t, "auth check", len(queriesOf(res.Queries, events.QTrackerAuth)), 1)
			want(t, "recorded", res.State.Decisions[len(res.State.Decisions)-1].Reason, "via /autopilot tasks retry")
			h.set.TrackerConfigured = true
			h.apply(events.TrackerAuth{OK: true})
			c := h.comment("maria", "write", "/autopilot done plan with epics")
			c.Declared = []state.Task{{Kind: state.KindEpic, Title: "CSV export"}}
			h.apply(c)
			res = h.say("maria", tc.sync)
			if syncs := queriesOf(res.Queries, events.QTrackerSync); len(syncs) != 1 || syncs[0].Jira != events.SyncAsked {
				t.Errorf("%s: sync queries = %+v", tc.sync, syncs)
			}
			res = h.say("maria", tc.retry)
			if syncs := queriesOf(res.Queries, events.QTrackerSync); len(syncs) != 1 || syncs[0].Jira != events.SyncRetry {
				t.Errorf("%s: sync queries = %+v", tc.retry, syncs)
			}
		})
	}
}

// TestStateRecordsTheTrackerInUse: every write records where the tasks go
// (the state comment names it), and the replies name that tracker and the
// tracker-neutral commands.
func TestStateRecordsTheTrackerInUse(t *testing.T) {
	for _, tc := range []struct {
		name, cfg   string
		configured  bool
		want        state.Tracker
		mustNot     string
		replyToSync string
	}{
		{"sub-issues", "tracker: github\n" + jiraOff, true, state.TrackerGitHub, "Jira", ""},
		{"jira", jiraOff, true, state.TrackerJira, "", ""},
		{"none", "", false, state.TrackerLocal, "`jira_url`", "`tracker: github`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg)
			h.set.TrackerConfigured = tc.configured
			h.runTo("greenfield", "decompose")
			c := h.comment("maria", "write", "/autopilot done tasks")
			c.Declared = []state.Task{{Kind: state.KindTask, Title: "a"}}
			res := h.apply(c)
			want(t, "tracker in use", res.State.TrackerInUse, tc.want)
			if tc.name == "sub-issues" {
				res = h.apply(events.TrackerSynced{Paused: "auth"})
				if !hasBody(res.Effects, "`/autopilot tasks retry`") || hasBody(res.Effects, "/autopilot jira") {
					t.Errorf("pause notice: %q", bodies(res.Effects))
				}
			}
			if tc.replyToSync != "" {
				res = h.refused("maria", "/autopilot tasks sync", "rejected:jira-not-configured")
				if !hasBody(res.Effects, tc.replyToSync, "`/autopilot tasks sync`") || hasBody(res.Effects, "/autopilot jira") {
					t.Errorf("reply to tasks sync without a tracker: %q", bodies(res.Effects))
				}
			}
		})
	}
}

// TestAuthGateNamesGitHubWithSubIssues: with tracker: github a refused
// access check asks about GitHub sub-issues, never Jira, and does not offer
// sub-issues "instead".
func TestAuthGateNamesGitHubWithSubIssues(t *testing.T) {
	h := newHarness(t, "tracker: github\n")
	h.set.TrackerConfigured, h.set.SubIssues = true, true
	toPlan(t, h)
	res := h.apply(events.TrackerAuth{OK: false, Detail: "GitHub authentication failed (HTTP 403)"})
	body := gateBody(t, res.Effects, res.State.Gate)
	wantLines(t, "sub-issue gate", body, " GitHub sub-issues authentication failed", " A) Retry authentication", " B) Continue without sub-issues (tasks saved locally only)")
	if strings.Contains(body, "Jira") || strings.Contains(body, "C) ") {
		t.Errorf("the sub-issue gate speaks of Jira or offers a C:\n%s", body)
	}
	res = h.say("maria", "B")
	if s := res.State; s.TrackerEnabled == nil || *s.TrackerEnabled || s.Status != state.InProgress {
		t.Errorf("after B: enabled %v, status %s", s.TrackerEnabled, s.Status)
	}
}
