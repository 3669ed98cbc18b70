package reliability

import (
	"context"
	"sync"
	"time"
)

// Clock is the suite's one fake clock. The fakes stamp objects and log
// requests with it, the adapter and reconcile read it, and every wait the
// code under test makes (mutation spacing, back-off, Retry-After) moves it
// instead of sleeping, so hours of outage take milliseconds. It is safe
// for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d (a negative d is ignored).
func (c *Clock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// AdvanceTo moves the clock to t unless it already reads t or later.
func (c *Clock) AdvanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

// Sleep moves the clock forward by d at once; it fails only when ctx is done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

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
