package reconcile

import (
	"fmt"
	"sort"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// The state never outgrows one comment. Input that would make it too large
// is refused where it enters (a task declaration, checked here because only
// a render can measure it), and detail that grows with time is kept compact:
// the ledger folds its oldest entries under State.LedgerFloor
// (outbox.Compact).

// applyComment feeds a comment to the engine; a report whose declared tasks
// would leave the machine block over state.DeclareBudget is refused with a
// reply that says how many of them fit.
func (ru *run) applyComment(ev engine.Comment) error {
	if len(ev.Declared) == 0 {
		return ru.apply(ev)
	}
	before := ru.st
	res, err := engine.Apply(ru.set, before, ev, ru.r.o.Now())
	if err != nil {
		return err
	}
	if ru.fits(res.State) {
		return ru.apply(ev)
	}
	// The largest prefix of the declaration that still fits.
	fit := sort.Search(len(ev.Declared), func(k int) bool {
		try := ev
		try.Declared = ev.Declared[:k+1]
		r, err := engine.Apply(ru.set, before, try, ru.r.o.Now())
		return err != nil || !ru.fits(r.State)
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
	ru.notes = append(ru.notes, fmt.Sprintf("comment %d: task declaration refused: state too large (%d tasks, %d fit)", ev.ID, len(ev.Declared), fit))
	ev.Declared, ev.DeclaredTooLarge = nil, what
	return ru.apply(ev)
}

// fits reports whether s's machine block stays within the declaration
// budget.
func (ru *run) fits(s *state.State) bool {
	if s == nil {
		return true
	}
	n, err := state.MachineSize(s, len(ru.r.o.StateKey) > 0)
	return err == nil && n <= state.DeclareBudget
}
