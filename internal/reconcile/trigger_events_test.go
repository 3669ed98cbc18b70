package reconcile

import (
	"context"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// The engine events a trigger carries (a kind the event table routes by
// itself) are applied as they are: no field of the trigger, no case here.
func TestTriggerEventsReachTheEngineAsCarried(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Issue")
	w.start(n)
	if _, err := w.rec.Issue(context.Background(), n, route.Trigger{Events: []events.Event{events.Closed{Actor: "maria"}}}); err != nil {
		t.Fatal(err)
	}
	if st := w.state(n); st.Run != state.RunStopped || st.Stop == nil || st.Stop.Reason != stops.KillUserAbort {
		t.Errorf("run %s, stop %+v; want stopped by the carried Closed", st.Run, st.Stop)
	}
}
