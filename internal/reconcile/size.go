package reconcile

import (
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
)

// applyComment feeds a comment to the engine; a report whose declared tasks
// would leave the machine block over state.DeclareBudget is refused with a
// reply that says how many of them fit (engine.FitDeclaration).
func (ru *run) applyComment(ev events.Comment) error {
	ev, note, err := engine.FitDeclaration(ru.set, ru.state(), ev, ru.r.o.Now(), len(ru.r.o.StateKey) > 0)
	if err != nil {
		return err
	}
	if note != "" {
		ru.notes = append(ru.notes, note)
	}
	return ru.apply(ev)
}
