package load

import (
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// What the bot's comments read again show about writes: before a state
// write, whether the state moved since the load (Moved); after a pass's
// writes, which comment stands for each marker (FirstByMarker).

// Moved says why the state of issue moved since a pass read version prev
// from its state comment (id stateID), as the comments cs read again show
// ("" when it did not; engine.StateMoved decides).
func (l Loader) Moved(cs []forge.Comment, issue int, stateID, prev int64, restoring bool) string {
	return engine.StateMoved(l.botComments(cs), l.want(issue), stateID, prev, restoring)
}

// FirstByMarker maps each marker of the bot's comments among cs (issue's,
// read back) to the comment that stands for it (engine.FirstByMarker
// decides, given read, the state the pass loaded).
func (l Loader) FirstByMarker(cs []forge.Comment, issue int, read *state.State) map[string]int64 {
	return engine.FirstByMarker(l.botComments(cs), l.want(issue), read)
}

// botComments is cs as the engine's state rules read them.
func (l Loader) botComments(cs []forge.Comment) []engine.BotComment {
	out := make([]engine.BotComment, len(cs))
	for i, c := range cs {
		out[i] = engine.BotComment{ID: c.ID, Trusted: l.Trusted(c), Body: c.Body}
	}
	return out
}

// want is what a state comment of issue must verify against.
func (l Loader) want(issue int) codec.Want {
	return codec.Want{Repo: l.Forge.Repo(), Issue: issue, Key: l.StateKey}
}
