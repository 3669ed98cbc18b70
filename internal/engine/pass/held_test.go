package pass_test

import (
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/testkit"
)

// TestABackgroundHoldRidesOnTheNextWrite: a sweep's pass the GitHub
// budget cut is recorded in the issue's state only by a write the issue's
// next pass makes anyway (recording it must not spend the budget it waits
// for): alone it writes nothing; with an answer it is in that write; a
// hold already over is not recorded; and the next sweep pass clears it,
// writing the state to say so.
func TestABackgroundHoldRidesOnTheNextWrite(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	now := w.clock.Add(time.Minute)
	until := now.Add(40 * time.Minute)
	held := events.BackgroundHeld{Until: until, Reason: state.HeldAtReserve}

	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, held, now)
	log, _ := rounds(t, n, now)
	testkit.WantDeep(t, "the hold alone", log, []string{"labels"})

	n = pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, w.comment("maria", "/autopilot done problem"), now)
	step(t, n, held, now)
	_, ps := rounds(t, n, now)
	if len(ps) == 0 || ps[0].BackgroundHeld == nil {
		t.Fatalf("the answer's write does not carry the hold: %d writes", len(ps))
	}
	testkit.Want(t, "until", ps[0].BackgroundHeld.Until.Equal(until), true)
	testkit.Want(t, "reason", ps[0].BackgroundHeld.Reason, state.HeldAtReserve)
	st := *w.st // a state that owes nothing else, with the hold recorded
	st.BackgroundHeld = ps[0].BackgroundHeld

	n = pass.New(w.set, &st, pass.Options{Issue: issue})
	step(t, n, held, now)
	log, _ = rounds(t, n, now)
	testkit.WantDeep(t, "the same hold again", log, []string{"labels"})

	n = pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, w.comment("maria", "/autopilot done problem"), now)
	step(t, n, events.BackgroundHeld{Until: now, Reason: state.HeldAtReserve}, now)
	_, ps = rounds(t, n, now)
	if len(ps) == 0 || ps[0].BackgroundHeld != nil {
		t.Fatalf("a hold already over was recorded: %+v", ps)
	}

	later := until.Add(time.Minute)
	n = pass.New(w.set, &st, pass.Options{Issue: issue, Sweep: true})
	step(t, n, events.Tick{}, later)
	_, ps = rounds(t, n, later)
	if len(ps) == 0 || ps[0].BackgroundHeld != nil {
		t.Fatalf("the sweep's pass did not clear the hold: %d writes", len(ps))
	}
}
