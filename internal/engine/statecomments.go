package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
)

// Which of the state comments read the engine believes: the newest
// trusted state's watermark, whether the state moved since a pass loaded
// it, and which comment stands for each of the bot's markers.

// BotComment is a comment as the state rules read it.
type BotComment struct {
	ID int64
	// Trusted: the configured bot wrote it (TrustedAuthor).
	Trusted bool
	Body    string
}

// firstLine is a comment's first line, trimmed: the marker of a bot
// comment.
func firstLine(body string) string {
	first, _, _ := strings.Cut(body, "\n")
	return strings.TrimSpace(first)
}

// StateWatermark is the Since of the newest trusted state among cs (an
// edited one's signed block counts; zero when there is none).
func StateWatermark(cs []BotComment, want codec.Want) time.Time {
	var best *state.State
	for _, c := range cs {
		if !c.Trusted || firstLine(c.Body) != state.Marker {
			continue
		}
		s, err := codec.Parse(c.Body, want)
		if s == nil || err != nil && !errors.Is(err, codec.ErrEdited) {
			continue
		}
		if best == nil || s.Version > best.Version {
			best = s
		}
	}
	if best == nil {
		return time.Time{}
	}
	return best.Since
}

// StateMoved says why the state moved since a pass read version prev from
// its state comment (id stateID), as the comments cs read again show (""
// when it did not): another trusted state comment is newer, the state
// comment is at another version, or it no longer verifies (unless the pass
// restores it over an edit: restoring).
func StateMoved(cs []BotComment, want codec.Want, stateID, prev int64, restoring bool) string {
	for _, c := range cs {
		if c.ID != stateID {
			if c.Trusted && strings.HasPrefix(c.Body, state.Marker) {
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

// FirstByMarker maps each marker of the bot's comments among cs (read
// back) to the lowest comment id carrying it (the one that stands). Only a
// state that verifies and is at least as new as read (the state the pass
// loaded) competes: an old or broken one stays beside a new run's state,
// e.g. the Action's during a migration to the App.
func FirstByMarker(cs []BotComment, want codec.Want, read *state.State) map[string]int64 {
	first := map[string]int64{}
	for _, c := range cs {
		if !c.Trusted {
			continue
		}
		m := firstLine(c.Body)
		if !marker.Is(m) {
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

// StatesRead is what the bot's state comments among those a load read
// show.
type StatesRead struct {
	// State is the newest state that verifies (nil: none).
	State *state.State
	// StateComment is the id of the comment the pass writes the state to:
	// the last one that set State or Restorable (0: none).
	StateComment int64
	// Restorable is the signed machine block of the newest state comment
	// whose human part was edited.
	Restorable *state.State
	// Tampered describes the edited comment, else the first one refused.
	Tampered string
	// Refused are the state comments that do not verify, with why (the edge
	// logs them).
	Refused []RefusedState
}

// RefusedState is a state comment that does not verify.
type RefusedState struct {
	ID  int64
	Err string
}

// ReadStates takes in the bot's state comments among cs, in order: the
// newest state that verifies, or the signed machine block of one whose
// human part was edited (restorable), and what is wrong with the others.
func ReadStates(cs []BotComment, want codec.Want) StatesRead {
	var r StatesRead
	for _, c := range cs {
		if !c.Trusted || firstLine(c.Body) != state.Marker {
			continue
		}
		s, err := codec.Parse(c.Body, want)
		switch {
		case err == nil:
			if r.State == nil || s.Version > r.State.Version {
				r.State, r.StateComment = s, c.ID
			}
		case errors.Is(err, codec.ErrEdited) && s != nil:
			// The human part was edited; the signed machine block is intact.
			if r.Restorable == nil || s.Version > r.Restorable.Version {
				r.Restorable, r.StateComment = s, c.ID
				r.Tampered = fmt.Sprintf("comment %d: %v", c.ID, err)
			}
		default:
			r.Refused = append(r.Refused, RefusedState{ID: c.ID, Err: err.Error()})
			if r.Tampered == "" {
				r.Tampered = fmt.Sprintf("comment %d: %v", c.ID, err)
			}
		}
	}
	return r
}
