package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestFoldsKeepTheStateInOneComment: past their limits the completed-step
// rows and the ledger fold (newest kept, the rest counted or under the
// floor), applied ledger entries and unhandled comments are never folded
// away, and every folded comment still counts as handled.
func TestFoldsKeepTheStateInOneComment(t *testing.T) {
	s := &state.State{}
	for i := range 70 {
		s.Completed = append(s.Completed, state.CompletedStep{Step: 1, Slug: "execute", Outcome: fmt.Sprint(i), At: time.Unix(int64(i), 0)})
	}
	for id := int64(1); id <= 500; id++ {
		o := state.LedgerNotCommand
		if id%100 == 0 {
			o = state.LedgerApplied
		}
		if id == 250 {
			continue // comment 250 is still unhandled (a failed lookup)
		}
		s.Ledger = append(s.Ledger, state.LedgerEntry{CommentID: id, Outcome: o})
	}
	s = outbox.Compact(s, []int64{250})
	if len(s.Completed) != 50 || s.CompletedFolded != 20 || s.Completed[0].Outcome != "20" {
		t.Errorf("completed: %d rows from %q, %d folded; want the newest 50 and 20 folded", len(s.Completed), s.Completed[0].Outcome, s.CompletedFolded)
	}
	if s.LedgerFloor != 249 {
		t.Errorf("ledger floor %d, want 249 (below the unhandled comment 250)", s.LedgerFloor)
	}
	kept := map[int64]bool{}
	for _, e := range s.Ledger {
		kept[e.CommentID] = true
	}
	for _, id := range []int64{100, 200, 300, 251, 500} {
		if !kept[id] {
			t.Errorf("ledger entry %d was folded away", id)
		}
	}
	if kept[1] || kept[249] {
		t.Error("entries below the floor are still listed")
	}
}
