package engine

import (
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestTheBudgetHoldRule: what a BackgroundHeld event and the sweep's Tick
// do to the state's hold, and whether they ask for a write of their own.
func TestTheBudgetHoldRule(t *testing.T) {
	ahead := func(h *harness) time.Time { return h.now().Add(41 * time.Minute) }
	for _, c := range []struct {
		name    string
		before  *state.BackgroundHold // set on the state first (until: ahead)
		ev      func(h *harness) events.Event
		want    bool // a hold is recorded after the event
		changed bool // the event asks for a write
	}{
		{"a hold ahead is recorded, without a write", nil,
			func(h *harness) events.Event {
				return events.BackgroundHeld{Until: ahead(h), Reason: state.HeldAtReserve}
			}, true, false},
		{"a hold already over is not", nil,
			func(h *harness) events.Event { return events.BackgroundHeld{Until: h.now(), Reason: state.HeldSpent} }, false, false},
		{"the same hold again changes nothing", &state.BackgroundHold{Reason: state.HeldAtReserve},
			func(h *harness) events.Event {
				return events.BackgroundHeld{Until: ahead(h), Reason: state.HeldAtReserve}
			}, true, false},
		{"the sweep's pass clears a hold, and writes", &state.BackgroundHold{Reason: state.HeldRetryAfter},
			func(*harness) events.Event { return events.Tick{} }, false, true},
		{"the sweep's pass without a hold writes nothing for it", nil,
			func(*harness) events.Event { return events.Tick{} }, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			h.start("greenfield")
			if c.before != nil {
				b := *c.before
				b.Until = ahead(h)
				h.st.BackgroundHeld = &b
			}
			res := h.apply(c.ev(h))
			want(t, "held", res.State.BackgroundHeld != nil, c.want)
			want(t, "changed", res.Changed, c.changed)
			want(t, "effects", nEffects(res), 0)
		})
	}
	// No run: nothing to record.
	res, err := Apply(settingsFor(t, jiraOff), nil, events.BackgroundHeld{Until: t0.Add(time.Hour), Reason: state.HeldAtReserve}, t0)
	if err != nil || res.State != nil {
		t.Fatalf("no run: %+v, %v", res.State, err)
	}
}
