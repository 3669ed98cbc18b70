package reconcile

import (
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

// recover handles tampered or lost state before any input is applied
// (engine.Recover); a rolled-back state is written whatever happens
// (pass.Options.Rewrite).
func (ru *run) recover(rc engine.Recovery) error {
	if rc.Rollback {
		ru.rollback = true
		s := ru.loaded.State
		ru.r.o.Logger.Warn("state is older than the bot's comments; re-applying the comments since", "issue", ru.number, "version", s.Version, "comments_version", ru.loaded.MaxVersion)
	}
	if rc.Note != "" {
		ru.notes = append(ru.notes, rc.Note)
	}
	if rc.Event == nil {
		return nil
	}
	return ru.apply(rc.Event)
}
