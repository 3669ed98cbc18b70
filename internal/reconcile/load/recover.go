package load

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine"
)

// Recovery is what a pass does about tampered or lost state before any
// input is applied.
type Recovery struct {
	// Event is what the engine is told (nil: nothing).
	Event engine.Event
	// Rollback: the state read is older than the bot's own comments.
	Rollback bool
	Note     string
}

// Recover says what the state as read needs: restoring the last good state
// over an edited comment, re-applying the comments since a state older
// than the bot's comments, or pausing on a lost one.
func (ld *Loaded) Recover() Recovery {
	if ld.Restorable != nil {
		// Restore the last good state over the edited comment (the engine
		// says so once).
		return Recovery{Note: "restored state after an edit: " + ld.Tampered,
			Event: engine.Recovered{Restored: true, Comment: ld.StateComment.ID, Version: ld.Restorable.Version}}
	}
	if s := ld.State; s != nil && s.Version < ld.MaxVersion {
		// The bot already posted comments from a newer state than this one:
		// an older, validly signed body was put back into the comment. The
		// comments since are applied again (the ledger lacks them; effects
		// are idempotent by marker) and the next version goes above every
		// version the bot's comments name, so versions never go back.
		return Recovery{Rollback: true, Note: fmt.Sprintf("state v%d is older than the bot's comments (v%d): comments re-applied", s.Version, ld.MaxVersion)}
	}
	if ld.State == nil && (ld.Lost || ld.Tampered != "") {
		why := "deleted"
		if ld.Tampered != "" {
			why = "modified so that it no longer verifies"
		}
		return Recovery{Note: "paused: state lost (" + why + ")", Event: engine.Recovered{Lost: true, Deleted: ld.Tampered == ""}}
	}
	return Recovery{}
}
