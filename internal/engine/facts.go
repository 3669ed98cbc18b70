package engine

import "github.com/autopilot-dev/autopilot/internal/state"

// ConfigRead: the repository configuration was read through the API this
// pass; the state keeps its text (small enough), so later events need not
// read it again.
type ConfigRead struct{ YAML string }

// Refused: GitHub refused a request with 422 (named by its fingerprint);
// it is given up, and the state remembers it so no later pass sends it
// again unchanged.
type Refused struct{ Request string }

func (ConfigRead) eventName() string { return "config-read" }
func (Refused) eventName() string    { return "refused" }

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
