package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// shipCfg is a custom flow with an irreversible Jira step, an evidence
// step without return_to and an irreversible release.
const shipCfg = `flows:
  ship:
    steps:
      - {slug: tasks, name: Tasks, jira: tasks, confirm: true, produces: "the release tasks"}
      - {slug: review, name: Review, evidence: review}
      - {slug: release, name: Release, confirm: true}
`

func TestConfirmGateFollowsTheJiraCheck(t *testing.T) {
	h := newHarness(t, shipCfg)
	h.set.TrackerConfigured = true
	res := h.start("ship")
	want(t, "auth check first", len(queriesOf(res.Queries, events.QTrackerAuth)), 1)
	want(t, "not started", res.State.Status, state.NotStarted)
	res = h.apply(events.TrackerAuth{OK: true})
	s := res.State
	wantGate(t, s, "confirm-tasks")
	want(t, "still not started", s.Status, state.NotStarted)
	body := gateBody(t, res.Effects, s.Gate)
	golden(t, "gate-confirm", body)
	res = h.say("maria", "A")
	want(t, "runs after confirmation", res.State.Status, state.InProgress)
	want(t, "run", res.State.Run, state.RunInProgress)
}

func TestDecliningAnIrreversibleStepStops(t *testing.T) {
	h := newHarness(t, shipCfg+"jira: {enabled: false}\n")
	h.start("ship")
	want(t, "confirm first", h.st.Gate != nil && h.st.Gate.Kind == "confirm-tasks", true)
	res := h.say("maria", "B")
	wantStopped(t, res, stops.KillUserAbort)
	want(t, "step not started", res.State.Status, state.NotStarted)
	// Resume asks again rather than starting the irreversible step.
	res = h.say("maria", "/autopilot resume")
	want(t, "asked again", res.State.Gate != nil && res.State.Gate.Kind == "confirm-tasks", true)
}

func TestEvidenceStepWithoutReturnToRunsTheRetryProtocol(t *testing.T) {
	h := newHarness(t, shipCfg+"jira: {enabled: false}\n")
	h.start("ship")
	h.say("maria", "A")
	h.done("tasks")
	want(t, "at review", h.st.Slug, "review")
	res := h.apply(changes("bob", "wrong version number"))
	s := res.State
	want(t, "retry_count", s.RetryCount, 1)
	want(t, "still review", s.Slug, "review")
	if len(s.RetryLog) != 1 || !strings.Contains(s.RetryLog[0].Reason, "wrong version number") {
		t.Errorf("retry log = %+v", s.RetryLog)
	}
	res = h.apply(approval("bob", "devin"))
	want(t, "approved: release asks to confirm", res.State.Gate != nil && res.State.Gate.Kind == "confirm-release", true)
	want(t, "review done", progressOf(res.State, "review"), state.Completed)
}
