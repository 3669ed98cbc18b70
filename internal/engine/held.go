package engine

import (
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// backgroundHeld records that the budget holds the background
// sync, without asking for a write: recording a wait must not spend the
// budget it waits for, so it rides on the next write this pass
// makes anyway (an answer, a command). A hold already over says nothing.
func (m *inputs) backgroundHeld(e events.BackgroundHeld) {
	if !e.Until.After(m.Now) {
		return
	}
	if h := m.S.BackgroundHeld; h != nil && h.Until.Equal(e.Until) && h.Reason == e.Reason {
		return
	}
	m.S.BackgroundHeld = &state.BackgroundHold{Until: e.Until.UTC(), Reason: e.Reason}
}

// backgroundResumed clears the hold: a sweep pass of the issue ran (its
// reads went through, so the budget admits background work again), and
// its write says the sync goes on.
func (m *inputs) backgroundResumed() {
	if m.S.BackgroundHeld != nil {
		m.S.BackgroundHeld = nil
		m.Changed = true
	}
}
