package engine

import (
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
)

// banner renders the status banner of the current state.
func (m *machine) banner() string { return prose.Banner(m.set.Config.All, m.s) }
