package load

import (
	"errors"
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// What the bot's comments read again show about writes: before a state
// write, whether the state moved since the load (Moved); after a pass's
// writes, which comment stands for each marker (FirstByMarker).

// Moved says why the state of issue moved since a pass read version prev
// from its state comment (id stateID), as the comments cs read again show
// ("" when it did not): another trusted state comment is newer, the state
// comment is at another version, or it no longer verifies (unless the
// pass restores it over an edit: restoring).
func (l Loader) Moved(cs []forge.Comment, issue int, stateID, prev int64, restoring bool) string {
	want := codec.Want{Repo: l.Forge.Repo(), Issue: issue, Key: l.StateKey}
	for _, c := range cs {
		if c.ID != stateID {
			if l.Trusted(c) && strings.HasPrefix(c.Body, state.Marker) {
				if s, err := codec.Parse(c.Body, want); err == nil && s.Version > prev {
					return fmt.Sprintf("another state comment %d is at v%d, this pass read v%d", c.ID, s.Version, prev)
				}
			}
			continue
		}
		s, err := codec.Parse(c.Body, want)
		if err == nil && s.Version != prev {
			return fmt.Sprintf("it is at v%d, this pass read v%d", s.Version, prev)
		}
		if err != nil && !restoring && !errors.Is(err, codec.ErrEdited) {
			return fmt.Sprintf("it no longer verifies (%v)", err)
		}
	}
	return ""
}

// FirstByMarker maps each marker of the bot's comments among cs (issue's,
// read back) to the lowest comment id carrying it (the one that stands).
// Only a state that verifies and is at least as new as read (the state
// the pass loaded) competes: an old or broken one stays beside a new
// run's state, e.g. the Action's during a migration to the App.
func (l Loader) FirstByMarker(cs []forge.Comment, issue int, read *state.State) map[string]int64 {
	want := codec.Want{Repo: l.Forge.Repo(), Issue: issue, Key: l.StateKey}
	first := map[string]int64{}
	for _, c := range cs {
		if !l.Trusted(c) {
			continue
		}
		m := FirstLine(c.Body)
		if !strings.HasPrefix(m, "<!-- autopilot:") {
			continue
		}
		if m == state.Marker {
			s, err := codec.Parse(c.Body, want)
			if err != nil && !errors.Is(err, codec.ErrEdited) || s == nil || read == nil || s.Version < read.Version {
				continue
			}
		}
		if id, ok := first[m]; !ok || c.ID < id {
			first[m] = c.ID
		}
	}
	return first
}
