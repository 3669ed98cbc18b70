package outbox

import (
	"sort"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Ledger folding: past ledgerFoldAbove entries, all but the newest
// ledgerKeep are folded under State.LedgerFloor (applied ones excepted).
const (
	ledgerFoldAbove = 400
	ledgerKeep      = 200
)

// Completed steps: past completedFoldAbove rows, the newest completedKeep
// stay and the rest are counted in State.CompletedFolded. (The retry log
// needs no folding: a step's entries are cleared when it succeeds.)
const (
	completedFoldAbove = 60
	completedKeep      = 50
)

// Compact keeps detail that grows with time compact before a write: the
// oldest completed-step rows are counted instead of listed, and the oldest
// ledger entries fold under State.LedgerFloor. read are the ids of the
// comments the pass read: the floor stays below every one of them left
// unhandled (a deferred answer, a failed permission lookup), which GitHub
// numbers above every comment created before them. Compact returns s
// itself when there is nothing to fold, a folded copy otherwise.
func Compact(s *state.State, read []int64) *state.State {
	if s == nil || len(s.Completed) <= completedFoldAbove && len(s.Ledger) <= ledgerFoldAbove {
		return s
	}
	s = Clone(s)
	if len(s.Completed) > completedFoldAbove {
		drop := len(s.Completed) - completedKeep
		s.Completed = append([]state.CompletedStep(nil), s.Completed[drop:]...)
		s.CompletedFolded += drop
	}
	if len(s.Ledger) > ledgerFoldAbove {
		foldLedger(s, read)
	}
	return s
}

func foldLedger(s *state.State, read []int64) {
	ids := make([]int64, len(s.Ledger))
	for i, e := range s.Ledger {
		ids[i] = e.CommentID
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	floor := ids[len(ids)-ledgerKeep-1]
	for _, id := range read {
		if id <= floor && !Handled(s, id) {
			floor = id - 1
		}
	}
	if floor <= s.LedgerFloor {
		return
	}
	keep := s.Ledger[:0:0]
	for _, e := range s.Ledger {
		// Applied entries stay listed: they are few (each moved the run)
		// and a decision never leaves the ledger (I5).
		if e.CommentID > floor || e.Outcome == state.LedgerApplied {
			keep = append(keep, e)
		}
	}
	s.Ledger, s.LedgerFloor = keep, floor
}
