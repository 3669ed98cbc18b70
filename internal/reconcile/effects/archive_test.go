package effects

import (
	"context"
	"fmt"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// decided is a state holding n key decisions, none archived.
func decided(n int) *state.State {
	s := &state.State{}
	for i := 1; i <= n; i++ {
		s.Decisions = append(s.Decisions, decision(i))
	}
	return s
}

func decision(i int) state.Decision {
	return state.Decision{Gate: fmt.Sprintf("gate-%d", i), Question: fmt.Sprintf("Ship part %d?", i), Option: "A", OptionText: "yes",
		By: "maria", At: t0, Link: fmt.Sprintf("https://github.com/o/r/issues/1#issuecomment-%d", i), CommentID: int64(i), GateOpenedAt: t0}
}

// pass settles what the thread shows of st's writes (as reconcile does:
// the markers and writes.RefusedOutbox, then outbox.Settle) and performs the effects on the
// sandbox. It returns the Ready; the caller stores its state when it is
// written.
func (r *rig) pass(t *testing.T, st *state.State, changed bool) outbox.Ready {
	t.Helper()
	// The refusals the rig remembers, as the state would.
	known := *st
	known.Refused = nil
	for fp := range r.refused {
		known.Refused = append(known.Refused, fp)
	}
	seen := outbox.Seen{Markers: map[string]bool{}, Refused: writes.RefusedOutbox(&known)}
	for m := range r.p.Markers {
		seen.Markers[m] = true
	}
	rd := outbox.Settle(st, nil, seen, changed, false)
	if err := r.p.Perform(context.Background(), list(rd.Effects...)); err != nil {
		t.Fatal(err)
	}
	return rd
}

// TestARefusedArchiveIsGivenUpAndItsDecisionsStay: GitHub refuses (422) an
// archive comment. Like a refused reply, the next pass sees it refused and
// gives it up: it is not carried out again, and the decisions it would have
// held stay in the state. Archiving then goes on: a later decision
// announces the next batch, which is posted and leaves the state.
func TestARefusedArchiveIsGivenUpAndItsDecisionsStay(t *testing.T) {
	r := newRig(t)
	archives := func(es []state.Effect) (ms []string) {
		for _, e := range es {
			if e.Kind == state.EffArchive {
				ms = append(ms, e.Marker)
			}
		}
		return ms
	}

	// Pass 1 writes a state holding 30 decisions: it announces the archive
	// of the oldest 25, and GitHub refuses it.
	r.sb.FailNext("POST comment", fmt.Errorf("unprocessable: %w", forge.ErrValidation))
	rd := r.pass(t, decided(30), true)
	if got := archives(rd.Effects); len(got) != 1 || got[0] != state.ArchiveMarker(1, 25) {
		t.Fatalf("pass 1 announced archives %v, want decisions 1-25", got)
	}
	if len(r.refused) != 1 {
		t.Fatalf("the 422 was not remembered: %v", r.refused)
	}
	st := rd.State

	// Pass 2 (nothing new): the refused archive is given up.
	rd = r.pass(t, st, false)
	if got := archives(rd.Effects); len(got) != 0 {
		t.Errorf("pass 2 carries out the refused archive again: %v", got)
	}
	if outbox.Announced(rd.State.Outbox, state.ArchiveMarker(1, 25)) {
		t.Errorf("pass 2 keeps the refused archive in the outbox: %+v", rd.State.Outbox)
	}
	if n := len(rd.State.Decisions); n != 30 || rd.State.DecisionsArchived != 0 {
		t.Errorf("after the refusal the state holds %d decisions (%d archived), want all 30, none archived", n, rd.State.DecisionsArchived)
	}

	// A pass that writes with nothing new announces the same batch again
	// (decisions past ArchiveAbove ask for an archive); as the same
	// request, it is not sent.
	rd = r.pass(t, st, true)
	if n := r.sb.Calls()["POST comment"]; n != 1 {
		t.Errorf("the refused archive was sent %d times, want once", n)
	}
	st = rd.State

	// Pass 3 records decision 31: the next archive (1-26) is announced and
	// posted; pass 4 sees it and drops its decisions from the state.
	st = outbox.Clone(st)
	st.Decisions = append(st.Decisions, decision(31))
	rd = r.pass(t, st, true)
	if got := archives(rd.Effects); len(got) != 1 || got[0] != state.ArchiveMarker(1, 26) {
		t.Fatalf("pass 3 announced archives %v, want decisions 1-26", got)
	}
	rd = r.pass(t, rd.State, false)
	if n := len(rd.State.Decisions); n != 5 || rd.State.DecisionsArchived != 26 {
		t.Errorf("after the posted archive the state holds %d decisions with %d archived, want 5 and 26", n, rd.State.DecisionsArchived)
	}
	if n := r.sb.Calls()["POST comment"]; n != 2 {
		t.Errorf("%d comment posts, want 2 (the refused archive once, the next one once)", n)
	}
}
