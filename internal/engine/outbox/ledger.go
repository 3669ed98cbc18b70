package outbox

import "github.com/autopilot-dev/autopilot/internal/state"

// The reactions the ledger announces: applied, rejected.
const (
	ReactUp      = "+1"
	ReactConfuse = "confused"
)

// Handled reports whether the comment id is already in the ledger.
func Handled(s *state.State, id int64) bool {
	if id <= s.LedgerFloor {
		return true // folded: classified long ago (State.LedgerFloor)
	}
	for _, e := range s.Ledger {
		if e.CommentID == id {
			return true
		}
	}
	return false
}
