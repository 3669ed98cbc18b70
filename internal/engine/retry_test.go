package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// failThrice reports three failures of the current step; it returns the
// result of the third.
func failThrice(h *harness, reason string) Result {
	h.t.Helper()
	var res Result
	for i := 0; i < machine.MaxRetries; i++ {
		res = h.say("devin", "/autopilot fail "+reason)
	}
	return res
}

func TestFailuresAutoRetryThenEscalate(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	h.say("devin", "/autopilot progress 2 drafting problem statement")

	for i := 1; i < machine.MaxRetries; i++ {
		res := h.say("devin", "/autopilot fail docker not running")
		s := res.State
		want(t, "retry_count", s.RetryCount, i)
		want(t, "status", s.Status, state.InProgress)
		want(t, "run", s.Run, state.RunInProgress)
		want(t, "gate", s.Gate == nil, true)
		want(t, "retry log rows", len(s.RetryLog), i)
		row := s.RetryLog[i-1]
		want(t, "row attempt", row.Attempt, i)
		want(t, "row step", row.Step, 1)
		want(t, "row name", row.Name, "Problem")
		want(t, "row sub-step preserved", row.SubStep, "2 drafting")
		want(t, "row reason", row.Reason, "docker not running")
		want(t, "sub-step kept", s.SubStep.Name, "drafting")
		want(t, "banner retries", s.Steps[0].Retries, i)
		if !hasBody(res.Effects, "retrying automatically", "from sub-step 2 drafting") {
			t.Errorf("no auto-retry notice: %q", bodies(res.Effects))
		}
	}
	res := h.say("devin", "/autopilot fail docker not running")
	s := res.State
	want(t, "retry_count", s.RetryCount, machine.MaxRetries)
	want(t, "status", s.Status, state.Failed)
	want(t, "run", s.Run, state.RunFailed)
	want(t, "problem progress", progressOf(s, "problem"), state.Failed)
	want(t, "retry log rows", len(s.RetryLog), 3)
	if len(s.Blockers) != 1 || !strings.Contains(s.Blockers[0], "Problem failed 3 consecutive times at sub_step 2 drafting. Last failure: docker not running. Auto-retry exhausted.") {
		t.Errorf("blockers = %q", s.Blockers)
	}
	wantGate(t, s, "skill-failed")
	body := gateBody(t, res.Effects, s.Gate)
	golden(t, "gate-skill-failed", body)
	wantDeep(t, "labels", labels.Labels(s), []string{"autopilot/step:problem", "autopilot/status:failed", "autopilot/flow:greenfield"})
}

func TestSkillFailedAnswers(t *testing.T) {
	tests := []struct {
		answer string
		check  func(t *testing.T, s *state.State, sessionsBefore int)
	}{
		{answer: "A", check: func(t *testing.T, s *state.State, before int) {
			want(t, "retry_count", s.RetryCount, 0)
			want(t, "sessions", s.Limits.Sessions, before+1)
			want(t, "status", s.Status, state.InProgress)
			want(t, "run", s.Run, state.RunInProgress)
			want(t, "retry log cleared", len(s.RetryLog), 0)
			want(t, "blockers cleared", len(s.Blockers), 0)
			want(t, "slug", s.Slug, "problem")
		}},
		{answer: "B", check: func(t *testing.T, s *state.State, _ int) {
			want(t, "moved on", s.Slug, "research")
			want(t, "problem skipped", progressOf(s, "problem"), state.Skipped)
			if !strings.HasPrefix(s.Completed[0].Outcome, "SKIPPED — skipped after SKILL FAILED") {
				t.Errorf("outcome = %q", s.Completed[0].Outcome)
			}
			want(t, "blockers cleared", len(s.Blockers), 0)
		}},
		{answer: "C", check: func(t *testing.T, s *state.State, _ int) {
			want(t, "run", s.Run, state.RunStopped)
			want(t, "reason", s.Stop.Reason, stops.KillUserAbort)
			want(t, "still failed", s.Status, state.Failed)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.answer, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			h.start("greenfield")
			failThrice(h, "boom")
			before := h.st.Limits.Sessions
			res := h.say("maria", tc.answer)
			tc.check(t, res.State, before)
		})
	}
}

func TestFailedStepIsNeverRetriedSilently(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	failThrice(h, "boom")
	for _, body := range []string{"/autopilot done it works now", "/autopilot fail again", "/autopilot progress 3 x"} {
		c := h.comment("devin", "write", body)
		res := h.apply(c)
		want(t, body, ledgerOf(res.State, c.ID), "rejected:no-step-running")
		want(t, "status after "+body, res.State.Status, state.Failed)
		want(t, "gate kept", res.State.Gate != nil && res.State.Gate.Kind == "skill-failed", true)
	}
	// /autopilot retry is the explicit acknowledgement (option A).
	res := h.say("maria", "/autopilot retry")
	want(t, "decision", res.Decision, "A")
	want(t, "status", res.State.Status, state.InProgress)
	// and is refused when nothing failed.
	c := h.comment("maria", "write", "/autopilot retry")
	res = h.apply(c)
	want(t, "retry without failure", ledgerOf(res.State, c.ID), "rejected:nothing-to-retry")
}

func TestSuccessAfterRetriesClearsRetryLogAndCount(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	h.done("problem")
	h.say("devin", "/autopilot fail one")
	s := h.say("devin", "/autopilot fail two").State
	want(t, "rows before", len(s.RetryLog), 2)
	s = h.done("research done").State
	want(t, "retry log", len(s.RetryLog), 0)
	want(t, "retry_count", s.RetryCount, 0)
	want(t, "research progress", progressOf(s, "research"), state.Completed)
	want(t, "research retries shown", s.Steps[1].Retries, 0)
	want(t, "plan retry count", s.RetryCount, 0)
}

func TestCircuitBreakerEscalatesImmediatelyAfterThreeFailedSessions(t *testing.T) {
	h := newHarness(t, jiraOff+"limits: {max_sessions: 10}\n")
	h.start("greenfield")
	for session := 1; session <= 3; session++ {
		s := failThrice(h, "same crash").State
		want(t, "failed sessions", s.FailedSessions["problem"], session)
		h.say("maria", "A")
	}
	res := h.say("devin", "/autopilot fail same crash")
	s := res.State
	want(t, "escalated at once", s.Status, state.Failed)
	want(t, "retry log rows", len(s.RetryLog), 1)
	want(t, "gate", s.Gate != nil && s.Gate.Kind == "skill-failed", true)
	if len(s.Blockers) != 1 || !strings.Contains(s.Blockers[0], "circuit breaker: Problem has failed in 4 sessions") {
		t.Errorf("blockers = %q", s.Blockers)
	}
}

// "Consecutive" failures across sessions: a success in between resets the
// breaker for that step.
func TestCircuitBreakerResetsWhenTheStepSucceeds(t *testing.T) {
	h := newHarness(t, jiraOff+"limits: {max_sessions: 10}\n")
	h.start("greenfield")
	for i := 0; i < 2; i++ {
		failThrice(h, "crash")
		h.say("maria", "A")
	}
	want(t, "failed sessions before success", h.st.FailedSessions["problem"], 2)
	h.done("problem at last")
	want(t, "failed sessions after success", h.st.FailedSessions["problem"], 0)
	h.say("maria", "/autopilot back problem")
	h.say("maria", "A")
	want(t, "back at problem", h.st.Slug, "problem")
	s := h.say("devin", "/autopilot fail crash").State
	want(t, "first failure auto-retries", s.Status, state.InProgress)
	want(t, "retry_count", s.RetryCount, 1)
}

// Abort at SKILL FAILED, then resume: the question is asked again; the
// failed step does not silently sit "in progress" nor run again.
func TestResumeAfterAbortingAFailedStepAsksAgain(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	failThrice(h, "disk full")
	h.say("maria", "C")
	res := h.say("maria", "/autopilot resume")
	s := res.State
	want(t, "run", s.Run, state.RunFailed)
	want(t, "status", s.Status, state.Failed)
	wantGate(t, s, "skill-failed")
	if !strings.Contains(gateBody(t, res.Effects, s.Gate), "Last failure reason: disk full") {
		t.Errorf("re-asked gate lacks the last failure reason")
	}
	res = h.say("maria", "A")
	want(t, "retried", res.State.Status, state.InProgress)
}
