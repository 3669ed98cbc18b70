package reconcile

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/reconcile/load"
)

// versionTag is the tag for comments posted by this pass (none before the
// first state write).
func (ru *run) versionTag() string {
	if ru.loaded.State == nil || ru.loaded.State.Version == 0 {
		return ""
	}
	return load.VersionTag(ru.loaded.State.Version)
}

// recover handles tampered or lost state before any input is applied.
func (ru *run) recover() error {
	ld := ru.loaded
	if ld.Restorable != nil {
		// Restore the last good state over the edited comment (the engine
		// says so once).
		ru.notes = append(ru.notes, "restored state after an edit: "+ld.Tampered)
		return ru.apply(engine.Recovered{Restored: true, Comment: ld.StateComment.ID, Version: ld.Restorable.Version})
	}
	if s := ld.State; s != nil && s.Version < ld.MaxVersion {
		// The bot already posted comments from a newer state than this one:
		// an older, validly signed body was put back into the comment. The
		// comments since are applied again (the ledger lacks them; effects
		// are idempotent by marker) and the next version goes above every
		// version the bot's comments name, so versions never go back.
		ru.rollback = true
		ru.changed = true
		ru.r.o.Logger.Warn("state is older than the bot's comments; re-applying the comments since", "issue", ru.number, "version", s.Version, "comments_version", ld.MaxVersion)
		ru.notes = append(ru.notes, fmt.Sprintf("state v%d is older than the bot's comments (v%d): comments re-applied", s.Version, ld.MaxVersion))
	}
	if ld.State == nil && (ld.Lost || ld.Tampered != "") {
		why := "deleted"
		if ld.Tampered != "" {
			why = "modified so that it no longer verifies"
		}
		ru.notes = append(ru.notes, "paused: state lost ("+why+")")
		return ru.apply(engine.Recovered{Lost: true, Deleted: ld.Tampered == ""})
	}
	return nil
}
