package machine

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Every gate action kind the state accepts has a handler, and no handler
// waits for a kind the state would refuse.
func TestEveryGateActionHasAHandler(t *testing.T) {
	kinds := state.ActionKinds()
	for _, k := range kinds {
		if gateActions[k] == nil {
			t.Errorf("gate action %q has no handler", k)
		}
	}
	if len(gateActions) != len(kinds) {
		t.Errorf("%d handlers for %d gate action kinds", len(gateActions), len(kinds))
	}
}
