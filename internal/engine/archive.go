package engine

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// alreadyDecided answers a late answer to a gate that was decided: who
// decided what when the decision is in the state, a link to its archive
// when it was archived. It reports whether it answered.
func (m *inputs) alreadyDecided(c events.Comment) bool {
	text := ""
	if d, ok := m.decidedFor(c); ok {
		text = fmt.Sprintf("already decided by @\u200b%s: %s", textsafe.Escape(d.By), d.Option)
	} else if a, ok := archivedFor(m.S, c); ok {
		text = fmt.Sprintf("already decided; that decision is archived with decisions %d–%d", a.From, a.To)
		if a.URL != "" {
			text += ": " + a.URL
		}
	} else if len(m.S.Archives) > 0 && m.S.Archives[0].From > 1 {
		text = "already decided; that decision is in an older archive of decisions (linked from the oldest one the state comment lists)."
	} else {
		return false
	}
	m.ledger(c.ID, state.RejectedAlreadyDecided)
	m.React(c.ID, outbox.ReactConfuse)
	m.replyOnce(c, "decided", text)
	return true
}

// archivedFor finds the archive holding the decision of the gate a late
// answer was meant for (the newest whose first gate opened before it).
func archivedFor(s *state.State, c events.Comment) (state.DecisionArchive, bool) {
	for i := len(s.Archives) - 1; i >= 0; i-- {
		if a := s.Archives[i]; !before(c.At, a.Opened) {
			return a, true
		}
	}
	return state.DecisionArchive{}, false
}
