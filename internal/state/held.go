package state

import "time"

// HoldReason is why the installation's GitHub budget held an issue's
// background sync (App mode: internal/budget).
type HoldReason string

// The reasons a budget holds background work.
const (
	// HeldAtReserve: the budget is at the interactive reserve, which
	// background work leaves to answers and commands.
	HeldAtReserve HoldReason = "reserve"
	// HeldSpent: the budget is spent until its reset.
	HeldSpent HoldReason = "spent"
	// HeldRetryAfter: GitHub asked to wait (a secondary limit's Retry-After).
	HeldRetryAfter HoldReason = "retry-after"
)

var holdReasons = set(HeldAtReserve, HeldSpent, HeldRetryAfter)

// Words is the reason as the banner says it.
func (r HoldReason) Words() string {
	switch r {
	case HeldAtReserve:
		return "interactive reserve"
	case HeldSpent:
		return "budget spent"
	case HeldRetryAfter:
		return "GitHub's Retry-After"
	}
	return string(r)
}

// BackgroundHold records that a sweep's pass of the issue was cut by the
// installation's GitHub budget: its background sync resumes at Until.
// It is written by the next write made anyway (never by a write of
// its own, which would spend the budget it waits for), and cleared by the
// next sweep pass.
type BackgroundHold struct {
	Until  time.Time  `json:"until"`
	Reason HoldReason `json:"reason"`
}

// Banner is the banner's Held line ("" when h is nil).
func (h *BackgroundHold) Banner() string {
	if h == nil {
		return ""
	}
	return "background sync of this issue was held by the GitHub budget (" + h.Reason.Words() + ") until " +
		h.Until.UTC().Format("15:04") + " UTC; it resumes then"
}

// validHold checks background_held.
func validHold(s *State) error {
	h := s.BackgroundHeld
	switch {
	case h == nil:
		return nil
	case h.Until.IsZero():
		return bad("background_held.until", "is missing")
	case !holdReasons[h.Reason]:
		return bad("background_held.reason", "%q is not one of reserve, spent, retry-after", h.Reason)
	}
	return nil
}
