package engine

import (
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func (m *inputs) configRead(e events.ConfigRead) {
	if !m.S.ConfigRead || m.S.ConfigYAML != e.YAML {
		m.S.ConfigRead, m.S.ConfigYAML = true, e.YAML
		m.Changed = true
	}
}

func (m *inputs) refused(e events.Refused) {
	for _, r := range m.S.Refused {
		if r == e.Request {
			return
		}
	}
	m.S.Refused = append(m.S.Refused, e.Request)
	if n := len(m.S.Refused); n > state.MaxRefused {
		m.S.Refused = m.S.Refused[n-state.MaxRefused:]
	}
	m.Changed = true
}
