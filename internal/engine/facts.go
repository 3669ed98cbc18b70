package engine

import "github.com/autopilot-dev/autopilot/internal/state"

func (m *machine) configRead(e ConfigRead) {
	if !m.s.ConfigRead || m.s.ConfigYAML != e.YAML {
		m.s.ConfigRead, m.s.ConfigYAML = true, e.YAML
		m.changed = true
	}
}

func (m *machine) refused(e Refused) {
	for _, r := range m.s.Refused {
		if r == e.Request {
			return
		}
	}
	m.s.Refused = append(m.s.Refused, e.Request)
	if n := len(m.s.Refused); n > state.MaxRefused {
		m.s.Refused = m.s.Refused[n-state.MaxRefused:]
	}
	m.changed = true
}
