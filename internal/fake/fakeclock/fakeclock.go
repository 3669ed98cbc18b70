// Package fakeclock is the manual clock the fakes and tests share: Now
// reads it, Advance moves it, and Sleep moves it instead of waiting, so
// hours of outage take milliseconds. It is test support only and never
// reads the real clock.
package fakeclock

import (
	"context"
	"sync"
	"time"
)

// Clock is a manual clock, safe for concurrent use. Pass Clock.Now to the
// fakes and to the code under test so they share one timeline.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock reading start.
func New(start time.Time) *Clock { return &Clock{t: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d; time never goes back, so a
// negative d is ignored.
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

// Sleep advances the clock by d at once; it fails only when ctx is done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}
