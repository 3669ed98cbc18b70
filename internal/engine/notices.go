package engine

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
)

func (m *inputs) recovered(e events.Recovered) {
	switch {
	case e.Restored && m.S != nil:
		m.Changed = true
		m.notice(fmt.Sprintf("tamper-%d-v%d", e.Comment, e.Version), prose.Tampered(e.Version))
	case e.Lost && m.S == nil:
		m.notice("state-lost", prose.StateLost(e.Deleted, m.Set.TriggerLabel))
	}
}

func (m *inputs) unmanaged(e events.Unmanaged) {
	if m.S != nil || e.Bot || Parse(e.Body).Kind != grammar.Command {
		return
	}
	p, ok := e.Perms[e.Author]
	if !ok {
		m.Ask(events.Query{Kind: events.QPerms, Logins: []string{e.Author}, Then: e})
		return
	}
	if p.Err || !p.Perm.AtLeast(m.Set.AnswerPermission) {
		return
	}
	m.ReplyTo(e.ID, prose.Unmanaged(m.Set.TriggerLabel))
}

// notice posts a one-off notice under a fixed marker: posted once, however
// often the condition is seen.
func (m *inputs) notice(key, text string) {
	mk := marker.Build(marker.Notice, key)
	m.Emit(state.Effect{Kind: state.EffComment, Marker: mk, Body: mk + "\n" + text})
}
