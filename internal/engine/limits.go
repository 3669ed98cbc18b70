package engine

import (
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// killSwitches evaluates the kill-switches at an iteration boundary (after
// done has completed). It returns true when the run stopped or must wait.
func (m *machine) killSwitches(done flow.Step) bool {
	lim := m.set.Config.Limits
	if m.hoursExceeded() {
		m.stop(stops.KillMaxHours, fmt.Sprintf("the run has been going for more than %.1f hours", lim.MaxHours))
		return true
	}
	if m.set.BudgetLow {
		m.stop(stops.KillResource, "the API rate budget is nearly spent")
		return true
	}
	if n := m.s.Limits.FailedWaves; n > 0 {
		detail := fmt.Sprintf("%d executor batch(es) failed in this session, during %s", n, done.Name)
		if m.lastFailure != "" {
			detail += "; the failed run: " + m.lastFailure
		}
		m.stop(stops.KillFailedWave, detail)
		return true
	}
	if done.Implements {
		if open, known := m.carryover(); known > 0 && float64(open)/float64(known) > 0.5 {
			m.stop(stops.KillCarryover, fmt.Sprintf("%d of %d tasks are still open after %s", open, known, done.Name))
			return true
		}
	}
	if m.s.Limits.HasConfidence && m.s.Limits.LastConfidence < lim.ConfidenceThreshold {
		conf := m.s.Limits.LastConfidence
		if m.s.Limits.Iterations <= 1 {
			// First iteration: hand the decision to a human.
			m.s.Run = state.RunAwaitingDecision
			m.openGate("low-confidence", fmt.Sprintf("DECISION REQUIRED: Low confidence (%.2f < %.2f) after %s — continue?", conf, lim.ConfidenceThreshold, done.Name), nil,
				[]state.Option{{Letter: "A", Text: "Continue with the next step", Action: state.ActLowConfContinue}, {Letter: "B", Text: "Stop here and take over by hand", Action: state.ActLowConfStop}},
				"B", "the executor itself reported low confidence")
			return true
		}
		m.stop(stops.KillLowConfidence, fmt.Sprintf("the executor reported confidence %.2f, below the threshold %.2f", conf, lim.ConfidenceThreshold))
		return true
	}
	return false
}

// proceedAfterBoundary continues the advance a low-confidence gate paused.
func (m *machine) proceedAfterBoundary() {
	m.proceed(m.step())
}

// sessionLimit fires max-sessions-reached when a new session would exceed
// the limit. It returns true when the run stopped.
func (m *machine) sessionLimit() bool {
	m.s.Limits.FailedWaves = 0
	if m.s.Limits.Sessions > m.set.Config.Limits.MaxSessions {
		m.s.Limits.Sessions = m.set.Config.Limits.MaxSessions
		m.stop(stops.KillMaxSessions, fmt.Sprintf("%d executor sessions used (limits.max_sessions)", m.set.Config.Limits.MaxSessions))
		return true
	}
	return false
}

func (m *machine) hoursExceeded() bool {
	start := m.s.Limits.RunStartedAt
	if start.IsZero() {
		return false
	}
	limit := time.Duration(m.set.Config.Limits.MaxHours * float64(time.Hour))
	return m.now.Sub(start) > limit
}

// carryover counts open tasks among those whose status is known (synced to
// Jira and back-synced). Without known statuses nothing is measured.
func (m *machine) carryover() (open, known int) {
	for _, t := range m.s.Tasks {
		if t.Kind != state.KindTask || t.Jira != state.JiraCreated || t.Step == "" {
			continue
		}
		known++
		if !t.Done {
			open++
		}
	}
	return open, known
}

func timeoutDur(d config.Duration) time.Duration { return time.Duration(d) }
