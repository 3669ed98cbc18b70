package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// testClockEnv names the test-only clock knob of `bot serve`: a file whose
// content is a Go duration ("25h") added to the wall clock the runs see.
// Replicas reading the same file move together, so an end-to-end test can
// step past a decision's deadline without waiting for it. The engine takes
// time as data from the carrier; this moves only that clock (the runs'
// recorded times, approval deadlines), never the server's own timers,
// leases or token expiry.
const testClockEnv = "AUTOPILOT_TEST_CLOCK_FILE"

// fileClock is the wall clock moved by the offset written in path, read
// at every call. A file that cannot be read or parsed keeps the last good
// offset (a writer replacing the file is seen half-written at worst).
type fileClock struct {
	path string
	wall func() time.Time
	mu   sync.Mutex
	last time.Duration
}

// newFileClock checks that path holds an offset now, so a typo fails at
// start rather than leaving the clock unmoved.
func newFileClock(path string, wall func() time.Time) (*fileClock, error) {
	c := &fileClock{path: path, wall: wall}
	d, err := c.read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w (want a file holding a Go duration such as 25h; for tests only)", testClockEnv, err)
	}
	c.last = d
	return c, nil
}

func (c *fileClock) read() (time.Duration, error) {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return 0, err
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s holds %q, not a duration", c.path, v)
	}
	return d, nil
}

// Now is the wall clock plus the file's offset.
func (c *fileClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, err := c.read(); err == nil {
		c.last = d
	}
	return c.wall().Add(c.last)
}

// testClock returns the runs' clock when the test-only knob is set (nil
// otherwise: the wall clock), warning that it is.
func testClock(getenv func(string) string, log *slog.Logger) (func() time.Time, error) {
	path := strings.TrimSpace(getenv(testClockEnv))
	if path == "" {
		return nil, nil
	}
	c, err := newFileClock(path, time.Now)
	if err != nil {
		return nil, err
	}
	log.Warn("the runs' clock is moved by a file: "+testClockEnv+" is for tests only; unset it in production", "file", path)
	return c.Now, nil
}
