package machine

import (
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// killSwitches evaluates the kill-switches at an iteration boundary (after
// done has completed). It returns true when the run stopped or must wait.
func (m *M) killSwitches(done flow.Step) bool {
	lim := m.Set.Config.Limits
	if m.hoursExceeded() {
		m.Stop(stops.KillMaxHours, fmt.Sprintf("the run has been going for more than %.1f hours", lim.MaxHours))
		return true
	}
	if m.Set.BudgetLow {
		m.Stop(stops.KillResource, "the API rate budget is nearly spent")
		return true
	}
	if n := m.S.Limits.FailedWaves; n > 0 {
		detail := fmt.Sprintf("%d executor batch(es) failed in this session, during %s", n, done.Name)
		if m.lastFailure != "" {
			detail += "; the failed run: " + m.lastFailure
		}
		m.Stop(stops.KillFailedWave, detail)
		return true
	}
	if done.Implements {
		if open, known := m.carryover(); known > 0 && float64(open)/float64(known) > 0.5 {
			m.Stop(stops.KillCarryover, fmt.Sprintf("%d of %d tasks are still open after %s", open, known, done.Name))
			return true
		}
	}
	if m.S.Limits.HasConfidence && m.S.Limits.LastConfidence < lim.ConfidenceThreshold {
		conf := m.S.Limits.LastConfidence
		if m.S.Limits.Iterations <= 1 {
			// First iteration: hand the decision to a human.
			m.S.Run = state.RunAwaitingDecision
			m.openGate(state.GateLowConfidence, fmt.Sprintf("DECISION REQUIRED: Low confidence (%.2f < %.2f) after %s — continue?", conf, lim.ConfidenceThreshold, done.Name), nil,
				[]state.Option{{Letter: "A", Text: "Continue with the next step", Action: state.ActLowConfContinue}, {Letter: "B", Text: "Stop here and take over by hand", Action: state.ActLowConfStop}},
				"B", "the executor itself reported low confidence")
			return true
		}
		m.Stop(stops.KillLowConfidence, fmt.Sprintf("the executor reported confidence %.2f, below the threshold %.2f", conf, lim.ConfidenceThreshold))
		return true
	}
	return false
}

// proceedAfterBoundary continues the advance a low-confidence gate paused.
func (m *M) proceedAfterBoundary() {
	m.proceed(m.Step())
}

// sessionLimit fires max-sessions-reached when a new session would exceed
// the limit. It returns true when the run stopped.
func (m *M) sessionLimit() bool {
	m.S.Limits.FailedWaves = 0
	if m.S.Limits.Sessions > m.Set.Config.Limits.MaxSessions {
		m.S.Limits.Sessions = m.Set.Config.Limits.MaxSessions
		m.Stop(stops.KillMaxSessions, fmt.Sprintf("%d executor sessions used (limits.max_sessions)", m.Set.Config.Limits.MaxSessions))
		return true
	}
	return false
}

func (m *M) hoursExceeded() bool {
	start := m.S.Limits.RunStartedAt
	if start.IsZero() {
		return false
	}
	limit := time.Duration(m.Set.Config.Limits.MaxHours * float64(time.Hour))
	return m.Now.Sub(start) > limit
}

// carryover counts open tasks among those whose status is known (synced to
// Jira and back-synced). Without known statuses nothing is measured.
func (m *M) carryover() (open, known int) {
	for _, t := range m.S.Tasks {
		if t.Kind != state.KindTask || t.Sync != state.SyncCreated || t.Step == "" {
			continue
		}
		known++
		if !t.Done {
			open++
		}
	}
	return open, known
}

// Tick is the sweep: executor timeouts and wall-clock limits at boundaries.
func (m *M) Tick(e events.Tick) {
	if m.S.Run == state.RunDone || m.S.Run == state.RunStopped {
		return
	}
	if ex := m.S.Exec; ex != nil && ex.Executor == "dispatch" && m.S.Status == state.InProgress {
		timeout := m.Set.Config.ExecutorFor(m.S.Slug).Timeout
		if m.Now.Sub(ex.DispatchedAt) > timeoutDur(timeout) {
			m.S.Limits.FailedWaves++
			m.Fail(fmt.Sprintf("dispatched run (session %s) did not report within %s", ex.Session, timeoutDur(timeout)))
			return
		}
	}
	if m.AwaitingEvidence() {
		m.checkLinked()
	}
	atBoundary := m.S.Run == state.RunAwaitingDecision || m.S.Status == state.NotStarted
	if !atBoundary {
		return
	}
	if e.BudgetLow {
		m.Stop(stops.KillResource, "the API rate budget is nearly spent")
		return
	}
	if m.hoursExceeded() && !m.gateKeepsTime() {
		m.Stop(stops.KillMaxHours, fmt.Sprintf("the run has been going for more than %.1f hours", m.Set.Config.Limits.MaxHours))
	}
}

// AwaitingEvidence reports whether the current step is running and only
// evidence (an approving review, green checks) can complete it.
func (m *M) AwaitingEvidence() bool {
	return m.Step().Evidence != "" && m.S.Status == state.InProgress && m.S.Run == state.RunInProgress
}

func timeoutDur(d config.Duration) time.Duration { return time.Duration(d) }

// gateKeepsTime reports whether the open gate's approver policy sets its
// own expiry (expire_after): waiting for its approvers is then timed by the
// policy, not by limits.max_hours.
func (m *M) gateKeepsTime() bool {
	if m.S.Gate == nil {
		return false
	}
	p, ok := m.Set.Config.ApprovalFor(m.S.Gate.Kind)
	return ok && p.ExpireAfter > 0
}
