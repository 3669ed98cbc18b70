package state

import "strings"

// GateKind says what an open gate (a Choose block) asks: the engine picks
// the answer's handling by it. Kinds for one step carry the step's slug
// (GateApproval, GateConfirm, GateSkip, GateRollback).
type GateKind string

// Gate kinds that name no step.
const (
	GateFlowSelect      GateKind = "flow-select"      // which flow runs on the issue
	GateSkillFailed     GateKind = "skill-failed"     // a step failed MaxRetries times
	GateNextCycle       GateKind = "next-cycle"       // a cycle is complete: start the next feature?
	GateSessionBoundary GateKind = "session-boundary" // a session is complete: start the next work?
	GateLowConfidence   GateKind = "low-confidence"   // a step reported low confidence
	// GateTrackerAuth: the tracker's authentication check failed (Jira or
	// GitHub sub-issues). The name is stored in states, so it stays.
	GateTrackerAuth GateKind = "jira-auth"
)

// Prefixes of the gate kinds for one step: the kind is prefix + slug.
const (
	gateApproval = "approval-"
	gateConfirm  = "confirm-"
	gateSkip     = "skip-"
	gateRollback = "rollback-"
)

// GateApproval is the kind of the gate that asks to approve what step slug
// produced.
func GateApproval(slug string) GateKind { return GateKind(gateApproval + slug) }

// GateConfirm is the kind of the gate that asks to start the irreversible
// step slug.
func GateConfirm(slug string) GateKind { return GateKind(gateConfirm + slug) }

// GateSkip is the kind of the gate that asks to skip step slug.
func GateSkip(slug string) GateKind { return GateKind(gateSkip + slug) }

// GateRollback is the kind of the gate that asks to re-run step slug.
func GateRollback(slug string) GateKind { return GateKind(gateRollback + slug) }

// IsApproval reports whether k is the approval gate of some step.
func (k GateKind) IsApproval() bool { return strings.HasPrefix(string(k), gateApproval) }

// StopReason is why a run stopped (Stop.Reason): a kill-switch name or
// max-iterations. Package engine/stops names them, with the recovery hint
// each is shown with.
type StopReason string

// LedgerOutcome is how a human comment was classified (LedgerEntry): it
// was applied, is no command, or was rejected for a reason
// ("rejected:<reason>", see Rejected).
type LedgerOutcome string

// Ledger outcomes that are no rejection.
const (
	LedgerApplied    LedgerOutcome = "applied"
	LedgerNotCommand LedgerOutcome = "not-a-command"
)

// rejectedPrefix starts every rejection outcome.
const rejectedPrefix = "rejected:"

// Rejections the engine records (Rejected builds the others, e.g. a
// command's own reason).
const (
	RejectedUnauthorized   LedgerOutcome = rejectedPrefix + "unauthorized"
	RejectedEdited         LedgerOutcome = rejectedPrefix + "edited"
	RejectedNotCanonical   LedgerOutcome = rejectedPrefix + "not-canonical"
	RejectedNoOpenGate     LedgerOutcome = rejectedPrefix + "no-open-gate"
	RejectedStale          LedgerOutcome = rejectedPrefix + "stale"
	RejectedInvalidOption  LedgerOutcome = rejectedPrefix + "invalid-option"
	RejectedAlreadyDecided LedgerOutcome = rejectedPrefix + "already-decided"
)

// Rejected is the outcome of a comment rejected for reason why.
func Rejected(why string) LedgerOutcome { return LedgerOutcome(rejectedPrefix + why) }

// Rejection returns the reason of a rejection outcome, and false for any
// other outcome.
func (o LedgerOutcome) Rejection() (string, bool) {
	why, ok := strings.CutPrefix(string(o), rejectedPrefix)
	if !ok {
		return "", false
	}
	return why, true
}

// Valid reports whether r is one of the run statuses.
func (r RunStatus) Valid() bool { return runStatuses[r] }

// Valid reports whether s is one of the step statuses.
func (s StepStatus) Valid() bool { return stepStatuses[s] }

// Valid reports whether s is one of the tracker sync states.
func (s SyncState) Valid() bool { return syncStates[s] }

// Valid reports whether t names a tracker, built in or registered
// (RegisterTracker); empty is no tracker name.
func (t Tracker) Valid() bool {
	_, ok := trackerLabel(t)
	return ok
}

// ParseTracker returns the tracker the config names s, or false.
func ParseTracker(s string) (Tracker, bool) {
	t := Tracker(s)
	return t, t.Valid()
}
