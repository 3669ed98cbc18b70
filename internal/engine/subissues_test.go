package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestJiraAuthGateOffersSubIssuesWhenTheForgeHasThem(t *testing.T) {
	h := newHarness(t, "")
	h.set.TrackerConfigured = true
	toPlan(t, h)
	res := h.apply(events.TrackerAuth{OK: false, Detail: "HTTP 401"})
	body := gateBody(t, res.Effects, res.State.Gate)
	if strings.Contains(body, "C) Create the tasks as GitHub sub-issues instead") {
		t.Fatalf("the gate offers sub-issues although the forge has none:\n%s", body)
	}

	h = newHarness(t, "")
	h.set.TrackerConfigured, h.set.SubIssues = true, true
	toPlan(t, h)
	res = h.apply(events.TrackerAuth{OK: false, Detail: "HTTP 401"})
	wantLines(t, "jira gate", gateBody(t, res.Effects, res.State.Gate), " C) Create the tasks as GitHub sub-issues instead")
	res = h.say("maria", "C")
	s := res.State
	want(t, "tracker", s.Tracker, "github")
	want(t, "enabled", s.TrackerEnabled != nil && *s.TrackerEnabled, true)
	want(t, "gate closed", s.Gate == nil, true)
	want(t, "step runs", s.Status, state.InProgress)
	if len(s.Decisions) == 0 || !strings.Contains(s.Decisions[len(s.Decisions)-1].OptionText, "sub-issues") {
		t.Errorf("the choice is not recorded as a decision: %+v", s.Decisions)
	}
}

func TestTrackerLocalKeepsTasksInTheIssueWithoutAsking(t *testing.T) {
	h := newHarness(t, "tracker: local\njira:\n  project: PROJ\n")
	h.set.TrackerConfigured = true
	res := toPlan(t, h)
	want(t, "gate", res.State.Gate == nil, true)
	want(t, "auth check", len(queriesOf(res.Queries, events.QTrackerAuth)), 0)
	want(t, "jira off", res.State.TrackerOff, state.TrackerNotConfigured)
}

func TestSubIssueAuthPauseNamesGitHubNotJira(t *testing.T) {
	h := newHarness(t, "tracker: github\n"+jiraOff)
	h.runTo("greenfield", "decompose")
	c := h.comment("maria", "write", "/autopilot done tasks")
	c.Declared = []state.Task{{Kind: state.KindTask, Title: "a"}}
	h.apply(c)
	res := h.apply(events.TrackerSynced{Paused: "auth"})
	if !hasBody(res.Effects, "GitHub refused to create this issue's task sub-issues") || hasBody(res.Effects, "Jira rejected") {
		t.Errorf("pause notice: %q", bodies(res.Effects))
	}
}
