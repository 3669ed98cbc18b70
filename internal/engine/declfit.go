package engine

import (
	"fmt"
	"sort"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// The state never outgrows one comment. Input that would make it too large
// is refused where it enters (a task declaration, checked here by
// rendering the state the declaration would leave), and detail that grows
// with time is kept compact: the ledger folds its oldest entries under
// State.LedgerFloor (outbox.Compact).

// FitDeclaration returns the comment event to apply in place of ev: ev
// itself when its declared tasks leave the machine block within
// state.DeclareBudget (signed: the state is signed), else ev with the
// declaration refused by a reply that says how many of the tasks fit, and
// a note for the outcome.
func FitDeclaration(set machine.Settings, before *state.State, ev events.Comment, now time.Time, signed bool) (events.Comment, string, error) {
	if len(ev.Declared) == 0 {
		return ev, "", nil
	}
	res, err := Apply(set, before, ev, now)
	if err != nil {
		return ev, "", err
	}
	if fitsBudget(res.State, signed) {
		return ev, "", nil
	}
	// The largest prefix of the declaration that still fits.
	fit := sort.Search(len(ev.Declared), func(k int) bool {
		try := ev
		try.Declared = ev.Declared[:k+1]
		r, err := Apply(set, before, try, now)
		return err != nil || !fitsBudget(r.State, signed)
	})
	chars := 0
	for _, t := range ev.Declared {
		chars += len([]rune(t.Title)) + len([]rune(t.Description))
	}
	what := fmt.Sprintf("the %d declared tasks (%d characters of titles and descriptions) would make autopilot's state larger than one GitHub comment can hold", len(ev.Declared), chars)
	switch {
	case fit == 0 && len(before.Tasks) > 0:
		what += fmt.Sprintf("; with the %d tasks already recorded, none of them fits. Declare them in a later step, or with shorter descriptions (keep details in the linked documents).", len(before.Tasks))
	case fit == 0:
		what += "; not even the first one fits. Declare shorter tasks (keep details in the linked documents)."
	default:
		what += fmt.Sprintf("; the first %d of them fit. Declare at most %d tasks of this size in one report, or shorten their descriptions (keep details in the linked documents).", fit, fit)
	}
	note := fmt.Sprintf("comment %d: task declaration refused: state too large (%d tasks, %d fit)", ev.ID, len(ev.Declared), fit)
	ev.Declared, ev.DeclaredTooLarge = nil, what
	return ev, note, nil
}

// fitsBudget reports whether s's machine block stays within the
// declaration budget.
func fitsBudget(s *state.State, signed bool) bool {
	if s == nil {
		return true
	}
	n, err := codec.MachineSize(s, signed)
	return err == nil && n <= state.DeclareBudget
}
