// Package outbox decides what one pass writes besides the engine's step:
// the outbox of announced effects and what is owed of it (Settle), the
// decision archives, the owed reactions, the comment ledger, the labels
// and the compaction of a state that grew. All pure functions of state and
// of what the caller read.
package outbox

import (
	"encoding/json"

	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Seen is what the caller found on the issue that says which announced
// writes are still owed.
type Seen struct {
	// Markers holds the first lines of the bot's comments on the thread:
	// a comment whose marker is there was posted.
	Markers map[string]bool
	// Refused holds the markers of outbox comments GitHub refused (422):
	// given up, never sent again.
	Refused map[string]bool
	// Owed are the reactions the stored ledger names and the thread does
	// not show (the ledger is the reactions' outbox).
	Owed []state.Effect
	// Links maps markers to the comments' links (for archive comments).
	Links map[string]string
}

// Ready is what one pass writes once the engine's queries are answered,
// in order: the state (when Write), then Effects; Labels are the issue's
// autopilot labels to match afterwards.
type Ready struct {
	State   *state.State
	Write   bool
	Effects []state.Effect
	Labels  []string
}

// Settle turns the state and effects a pass's events produced into its
// Ready. Writes announced in the stored outbox and not seen done are
// carried out again: comments first (newest entry first), and a dispatch
// whose step still waits for its run is retried (Effect.Retry); reactions
// the ledger owes follow. Archives of the oldest decisions are settled
// the same way (settleArchives, archiveNext). Every comment and dispatch
// of the pass is then announced in the outbox, which the state write
// carries before any of them is performed. changed: the events changed the state; classified:
// the ledger grew, which is written with the pass's effects when there
// are any (a write of its own at the end otherwise). Settle never mutates
// s.
func Settle(s *state.State, effects []state.Effect, seen Seen, changed, classified bool) Ready {
	if s == nil {
		return Ready{Effects: effects}
	}
	s = Clone(s)
	effects = append(settleArchives(s, seen), effects...)
	for _, e := range s.Outbox {
		switch e.Kind {
		case state.EffComment:
			if seen.Markers[e.Marker] || seen.Refused[e.Marker] {
				continue
			}
			effects = append([]state.Effect{e}, effects...)
		case state.EffDispatch:
			if ex := s.Exec; ex == nil || ex.Session != e.Marker || ex.RunID != 0 {
				continue // the step moved on or its run is known
			}
			e.Retry = true
			effects = append(effects, e)
		case state.EffDeployAnswer:
			if d := s.DeployByMarker(e.Marker); d == nil || d.Sent {
				continue // GitHub took it (or the request is gone)
			}
			effects = append(effects, e)
		}
	}
	s.Outbox = nil
	effects = append(effects, seen.Owed...)
	for _, e := range effects {
		if !state.EffectKinds[e.Kind].Outbox || e.Kind == state.EffComment && seen.Markers[e.Marker] {
			continue
		}
		if !Announced(s.Outbox, e.Marker) {
			s.Outbox = append(s.Outbox, outboxEntry(e))
		}
	}
	write := changed || classified && len(effects) > 0
	if write {
		if e, ok := archiveNext(s); ok {
			effects = append(effects, e)
		}
	}
	return Ready{State: s, Write: write, Effects: effects, Labels: labels.Labels(s)}
}

// Announced reports whether outbox holds an entry with marker.
func Announced(outbox []state.Effect, marker string) bool {
	for _, o := range outbox {
		if o.Marker == marker {
			return true
		}
	}
	return false
}

// Rollup is a comment's reaction counts as listed with it; nil: unknown.
type Rollup struct {
	ID        int64
	Reactions map[string]int
}

// OwedReactions are the reactions the stored ledger announced that the
// comments read do not show (a run that died after its state write): 👍
// for an applied comment, 😕 for a rejected one (PRODUCT §7). The ledger
// is written before any reaction is sent, so it is the reactions' outbox;
// each comment's rollup says what happened (a person's identical reaction
// counts too). Comments whose rollup is unknown are left alone.
func OwedReactions(stored *state.State, read []Rollup) []state.Effect {
	if stored == nil {
		return nil
	}
	outcomes := map[int64]state.LedgerOutcome{}
	for _, e := range stored.Ledger {
		outcomes[e.CommentID] = e.Outcome
	}
	var out []state.Effect
	for _, c := range read {
		o, ok := outcomes[c.ID]
		if !ok || c.Reactions == nil {
			continue
		}
		want := ""
		if o == state.LedgerApplied {
			want = ReactUp
		} else if _, rejected := o.Rejection(); rejected {
			want = ReactConfuse
		}
		if want != "" && c.Reactions[want] == 0 {
			out = append(out, state.Effect{Kind: state.EffReact, Target: c.ID, Reaction: want, Owed: true})
		}
	}
	return out
}

func Clone(s *state.State) *state.State {
	b, err := json.Marshal(s)
	if err != nil {
		panic("engine: state does not marshal: " + err.Error()) // all fields are plain data
	}
	var c state.State
	if err := json.Unmarshal(b, &c); err != nil {
		panic("engine: state does not unmarshal: " + err.Error())
	}
	return &c
}
