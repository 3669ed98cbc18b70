package fakejira

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
)

// Clock is the manual test clock (internal/fake/fakeclock): Now reads it,
// Advance moves it, and Sleep moves it instead of waiting. Pass Clock.Now
// as Options.Now and to the code under test so both share one timeline.
type Clock = fakeclock.Clock

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return fakeclock.New(start) }
