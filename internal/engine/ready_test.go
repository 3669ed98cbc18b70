package engine

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestSettleCarriesTheOutbox(t *testing.T) {
	c := func(m string) state.Effect { return state.Effect{Kind: state.EffComment, Marker: m, Body: m + "\nx"} }
	disp := state.Effect{Kind: state.EffDispatch, Marker: "ap-12-1-1", Workflow: "w.yml"}
	s := &state.State{Exec: &state.Execution{Session: "ap-12-1-1"},
		Outbox: []state.Effect{c("done"), c("owed1"), c("refused"), c("owed2"), disp}}
	react := state.Effect{Kind: state.EffReact, Target: 7, Reaction: "+1"}
	owed := state.Effect{Kind: state.EffReact, Target: 8, Reaction: "confused", Owed: true}
	seen := outbox.Seen{Markers: map[string]bool{"done": true}, Refused: map[string]bool{"refused": true}, Owed: []state.Effect{owed}}
	rd := outbox.Settle(s, []state.Effect{c("new"), react}, seen, false, true)
	var got []string
	for _, e := range rd.Effects {
		got = append(got, string(e.Kind)+" "+e.Marker)
	}
	wantDeep(t, "writes", got, []string{"comment owed2", "comment owed1", "comment new", "react ", "dispatch ap-12-1-1", "react "})
	want(t, "dispatch retried", rd.Effects[4].Retry, true)
	var box []string
	for _, e := range rd.State.Outbox {
		box = append(box, e.Marker)
	}
	wantDeep(t, "outbox", box, []string{"owed2", "owed1", "new", "ap-12-1-1"})
	want(t, "classifications ride on the effects' write", rd.Write, true)
	want(t, "input kept", len(s.Outbox), 5)

	s.Exec.RunID = 99 // the run is known: the dispatch is done
	rd = outbox.Settle(s, nil, outbox.Seen{Markers: map[string]bool{"done": true, "owed1": true, "owed2": true, "refused": true}}, false, true)
	want(t, "nothing owed", len(rd.Effects), 0)
	want(t, "empty outbox", len(rd.State.Outbox), 0)
	want(t, "no write for classifications alone", rd.Write, false)
}

func TestDispatchedSettlesItsOutboxEntry(t *testing.T) {
	h, res := toDispatch(t)
	rd := outbox.Settle(res.State, res.Effects, outbox.Seen{}, res.Changed, false)
	h.st = rd.State
	session := h.st.Exec.Session
	if !outbox.Announced(h.st.Outbox, session) {
		t.Fatalf("dispatch not announced: %+v", h.st.Outbox)
	}
	res = h.apply(events.Dispatched{Session: session, RunID: 777})
	want(t, "entry settled", outbox.Announced(res.State.Outbox, session), false)
	want(t, "written", res.Changed, true)
}
