package reliability

import (
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
)

// Clock is the suite's one fake clock (internal/fake/fakeclock). The fakes
// stamp objects and log requests with it, the adapter and reconcile read
// it, and every wait the code under test makes (mutation spacing,
// back-off, Retry-After) moves it instead of sleeping, so hours of outage
// take milliseconds.
type Clock = fakeclock.Clock

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return fakeclock.New(start) }

// runClock is one adapter's view of the shared clock: it remembers the last
// time it handed out, which is when the adapter decided to send its latest
// request (other runs, and people, move the shared clock meanwhile).
type runClock struct {
	c    *Clock
	mu   sync.Mutex
	last time.Time
}

func (r *runClock) Now() time.Time {
	t := r.c.Now()
	r.mu.Lock()
	r.last = t
	r.mu.Unlock()
	return t
}

func (r *runClock) lastRead() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}
