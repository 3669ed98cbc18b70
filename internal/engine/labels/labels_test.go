package labels

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/testkit"
)

func TestManagedLabels(t *testing.T) {
	for _, l := range Labels(&state.State{Slug: "plan", Run: state.RunInProgress, Flow: "greenfield", Tasks: []state.Task{{Sync: state.SyncPending}}}) {
		testkit.Want(t, l+" managed", Managed(l), true)
	}
	for _, l := range []string{"autopilot", "bug", "autopilot/other"} {
		testkit.Want(t, l+" managed", Managed(l), false)
	}
}
