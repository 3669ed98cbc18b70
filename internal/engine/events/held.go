package events

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// BackgroundHeld: a sweep's pass of this issue was cut by the
// installation's GitHub budget (App mode), which holds its background sync
// until Until. The carrier steps it into the next pass; the state
// records it only if that pass writes anyway.
type BackgroundHeld struct {
	Until  time.Time
	Reason state.HoldReason
}

func (BackgroundHeld) eventName() string { return "background-held" }
