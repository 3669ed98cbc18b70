package writes

import (
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// View is what the state comment shows people besides the machine block:
// the next action and the steps of s's flow with their labels.
func View(cfg *config.Config, s *state.State) codec.View {
	f := cfg.All[s.Flow]
	v := codec.View{Action: prose.NextAction(s)}
	if f != nil {
		for i, st := range f.Steps {
			v.Steps = append(v.Steps, codec.StepInfo{Slug: st.Slug, Name: st.Name, Label: f.LabelOf(i + 1)})
		}
	}
	return v
}
