package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// tokenRun is tokenRun for the current session and step's workflow.
func (h *harness) tokenRun(id int64, conclusion string) events.RunCompleted {
	r := tokenRun(id, h.st.Exec.Session, conclusion)
	r.Path = ".github/workflows/" + h.set.Config.ExecutorFor(h.st.Slug).Workflow
	return r
}

// failRun reports the current dispatched run as failed.
func failRun(h *harness, id int64) Result {
	h.t.Helper()
	return h.apply(h.tokenRun(id, "failure"))
}

// passRun reports the current dispatched run as succeeded.
func passRun(h *harness, id int64) Result {
	h.t.Helper()
	return h.apply(h.tokenRun(id, "success"))
}

func TestFailedWaveCounterResetsAtEachNewSession(t *testing.T) {
	t.Run("retry with a fresh session after escalation", func(t *testing.T) {
		h, _ := toDispatch(t)
		for i := int64(1); i <= machine.MaxRetries; i++ {
			failRun(h, i)
		}
		wantGate(t, h.st, "skill-failed")
		want(t, "failed batches counted", h.st.Limits.FailedWaves, 3)
		res := h.say("maria", "A")
		want(t, "a new session (after the fresh one at the boundary)", res.State.Limits.Sessions, 3)
		want(t, "counter reset", res.State.Limits.FailedWaves, 0)
		res = passRun(h, 10)
		want(t, "no failed-wave stop", res.State.Run, state.RunInProgress)
		want(t, "next step", res.State.Slug, "run-tests")
	})
	t.Run("resume after the failed-wave stop", func(t *testing.T) {
		h, _ := toDispatch(t)
		failRun(h, 1)
		wantStopped(t, passRun(h, 2), stops.KillFailedWave)
		res := h.say("maria", "/autopilot resume")
		want(t, "counter reset", res.State.Limits.FailedWaves, 0)
		want(t, "goes on", res.State.Slug, "run-tests")
		res = h.done("tests pass")
		want(t, "no second stop", res.State.Run, state.RunInProgress)
	})
	t.Run("a continued session keeps counting", func(t *testing.T) {
		// Decompose is dispatched: its failed batch stops the run at the
		// boundary, before the fresh-session question.
		h := newHarness(t, jiraOff+"steps: {decompose: {kind: dispatch, workflow: d.yml}}\n")
		h.runTo("greenfield", "decompose")
		failRun(h, 1)
		res := passRun(h, 2)
		wantStopped(t, res, stops.KillFailedWave)
		want(t, "no boundary question yet", res.State.Gate == nil, true)
		res = h.say("maria", "/autopilot resume")
		wantGate(t, res.State, "session-boundary")
	})
}

func TestResumeAfterMaxIterationsGrantsAFreshIterationBudget(t *testing.T) {
	h := newHarness(t, reviewCfg+"max_iterations: 2\n")
	for _, finding := range []string{"first", "second"} {
		reviewLoopTo(t, h, "review-loop", "code-review")
		h.apply(changes("bob", finding))
	}
	want(t, "stopped", h.st.Stop.Reason, stops.StopMaxIterations)
	want(t, "iteration when stopped", h.st.Review.Iteration, 3)
	res := h.say("maria", "/autopilot resume")
	want(t, "back to plan", res.State.Slug, "plan")
	want(t, "iteration budget reset", res.State.Review.Iteration, 1)
	want(t, "review cycles still counted", res.State.Review.ReviewCycle, 2)
	// A fresh budget: the next not-clean verdict returns to plan, the one
	// after that stops again.
	reviewLoopTo(t, h, "review-loop", "code-review")
	want(t, "within the new budget", h.apply(changes("bob", "third")).State.Slug, "plan")
	reviewLoopTo(t, h, "review-loop", "code-review")
	res = h.apply(changes("bob", "fourth"))
	wantStopped(t, res, stops.StopMaxIterations)
}

func TestResumeAfterSpiralCountsFindingsAfresh(t *testing.T) {
	h := newHarness(t, reviewCfg)
	for i := 0; i < 3; i++ {
		reviewLoopTo(t, h, "review-loop", "code-review")
		h.apply(changes("bob", "Missing tests"))
	}
	want(t, "spiral", h.st.Stop.Reason, stops.KillSpiral)
	h.say("maria", "/autopilot resume")
	want(t, "history cleared", len(h.st.Review.FailureHistory), 0)
	// The same finding once more is one cycle, not a fourth in a row.
	reviewLoopTo(t, h, "review-loop", "code-review")
	res := h.apply(changes("bob", "Missing tests"))
	want(t, "returned to plan", res.State.Slug, "plan")
	want(t, "running", res.State.Run, state.RunInProgress)
	if !strings.Contains(res.State.Review.ReturnToPlanReason, "Missing tests") {
		t.Errorf("return-to-plan reason = %q", res.State.Review.ReturnToPlanReason)
	}
}
