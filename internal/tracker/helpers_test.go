package tracker

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
)

func newClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
}

func countOps(calls []SandboxCall, op string) int {
	n := 0
	for _, c := range calls {
		if c.Op == op {
			n++
		}
	}
	return n
}
