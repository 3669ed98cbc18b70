package tasksync

import "github.com/autopilot-dev/autopilot/internal/state"

// PendingCount is the number of tasks waiting for their tracker.
func PendingCount(s *state.State) int {
	n := 0
	for _, t := range s.Tasks {
		if t.Sync == state.SyncPending || t.Sync == state.SyncSending {
			n++
		}
	}
	return n
}
