// Package stops names the reasons a run stops at an iteration boundary
// (the kill-switches of seed 004, max-iterations) and the recovery hint
// each is recorded and shown with.
package stops

import "github.com/autopilot-dev/autopilot/internal/state"

// Kill-switch names (seed 004).
const (
	KillMaxSessions   state.StopReason = "max-sessions-reached"
	KillMaxHours      state.StopReason = "max-hours-exceeded"
	KillSpiral        state.StopReason = "spiral"
	KillFailedWave    state.StopReason = "failed-wave"
	KillCarryover     state.StopReason = "carryover-too-high"
	KillLowConfidence state.StopReason = "low-confidence-fallback"
	KillResource      state.StopReason = "resource-overload"
	KillUserAbort     state.StopReason = "user-abort"
	StopMaxIterations state.StopReason = "max-iterations"
	// StopApprovalExpired: a question with an approver policy expired
	// unanswered (on_expire: stop).
	StopApprovalExpired state.StopReason = "approval-expired"
)

// RecoveryHint is the recovery hint recorded with a stop reason (a
// kill-switch name or max-iterations) and shown in the stop notice, the
// state comment and the run summary.
func RecoveryHint(reason state.StopReason) string {
	switch reason {
	case KillSpiral:
		return "Triage the repeating failure by hand; autopilot will not retry it on its own."
	case KillFailedWave:
		return "Investigate the failed executor batch (test contract drift, environment), fix it, then resume."
	case KillCarryover:
		return "The last session left more than half its tasks open. Reduce scope or split the issue before resuming."
	case KillMaxHours:
		return "Raise limits.max_hours in .github/autopilot.yml or address the slow steps, then resume."
	case KillMaxSessions:
		return "Graceful stop — not an error. Raise limits.max_sessions or resume to allow more sessions."
	case KillResource:
		return "The API rate budget is nearly spent. Wait for the rate limit to reset, then resume."
	case KillLowConfidence:
		return "Lower limits.confidence_threshold or run the next step by hand, then resume."
	case KillUserAbort:
		return "Resume when ready (re-add the trigger label or comment /autopilot resume)."
	case StopApprovalExpired:
		return "Nobody decided the open question in time. Resume with /autopilot resume to ask again; its reminders and expiry start over."
	case StopMaxIterations:
		return "The review loop reached its iteration limit; rethink the plan, then resume."
	}
	return "Resume when the cause is addressed."
}
