package engine

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/reply"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func (m *machine) recovered(e Recovered) {
	switch {
	case e.Restored && m.s != nil:
		m.changed = true
		m.notice(fmt.Sprintf("tamper-%d-v%d", e.Comment, e.Version), prose.Tampered(e.Version))
	case e.Lost && m.s == nil:
		m.notice("state-lost", prose.StateLost(e.Deleted, m.set.TriggerLabel))
	}
}

func (m *machine) unmanaged(e Unmanaged) {
	if m.s != nil || e.Bot || Parse(e.Body).Kind != reply.Command {
		return
	}
	p, ok := e.Perms[e.Author]
	if !ok {
		m.ask(Query{Kind: QPerms, Logins: []string{e.Author}, Then: e})
		return
	}
	if p.Err || !p.Perm.AtLeast(m.set.AnswerPermission) {
		return
	}
	m.replyTo(e.ID, prose.Unmanaged(m.set.TriggerLabel))
}

// notice posts a one-off notice under a fixed marker: posted once, however
// often the condition is seen.
func (m *machine) notice(key, text string) {
	marker := "<!-- autopilot:notice " + key + " -->"
	m.emit(state.Effect{Kind: state.EffComment, Marker: marker, Body: marker + "\n" + text})
}
