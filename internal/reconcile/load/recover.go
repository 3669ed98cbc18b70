package load

import (
	"github.com/autopilot-dev/autopilot/internal/engine"
)

// Found is what the load found about the state, as the engine reads it
// (engine.Recover decides what the pass does about it).
func (ld *Loaded) Found() engine.LoadFound {
	f := engine.LoadFound{State: ld.State, Restorable: ld.Restorable, Tampered: ld.Tampered, MaxVersion: ld.MaxVersion, Lost: ld.Lost}
	if ld.StateComment != nil {
		f.StateComment = ld.StateComment.ID
	}
	return f
}

// Recover is the engine's recovery for what the load found (engine.Recover).
func (ld *Loaded) Recover() engine.Recovery { return engine.Recover(ld.Found()) }
