package engine

import (
	"github.com/autopilot-dev/autopilot/internal/engine/approvals"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// chooseShown compares the open question's Choose comment, as the thread
// shows it, with what the state says it shows, and asks for one edit when
// they differ: a vote's edit lost between the state write and the PATCH
// (a crash, a failed request) is redone by the next pass that reads the
// comment, an event or the sweep; nothing is asked when they agree.
//
// Under an approver policy the comment shows the quorum line once a vote
// was counted; before any, it may show the question alone (as it was
// posted). A comment the pass did not read is left alone.
func (m *inputs) chooseShown(e events.ChooseShown) {
	p, ok := m.gatePolicy()
	if !ok {
		return
	}
	g := m.S.Gate
	mk := prose.GateMarker(g.ID)
	shown, ok := e.Bodies[mk]
	if !ok {
		return
	}
	b := ballotOf(g)
	if len(b.Votes) == 0 && shown == prose.Gate(g) {
		return
	}
	if want := prose.GateWith(g, "Approvals: "+approvals.Line(p, b)); shown != want {
		m.Emit(state.Effect{Kind: state.EffEdit, Marker: mk, Body: want})
	}
}
