package engine

import (
	"fmt"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestSettleCarriesTheOutbox(t *testing.T) {
	c := func(m string) state.Effect { return state.Effect{Kind: state.EffComment, Marker: m, Body: m + "\nx"} }
	disp := state.Effect{Kind: state.EffDispatch, Marker: "ap-12-1-1", Workflow: "w.yml"}
	s := &state.State{Exec: &state.Execution{Session: "ap-12-1-1"},
		Outbox: []state.Effect{c("done"), c("owed1"), c("refused"), c("owed2"), disp}}
	react := state.Effect{Kind: state.EffReact, Target: 7, Reaction: "+1"}
	owed := state.Effect{Kind: state.EffReact, Target: 8, Reaction: "confused", Owed: true}
	seen := Seen{Markers: map[string]bool{"done": true}, Refused: map[string]bool{"refused": true}, Owed: []state.Effect{owed}}
	rd := Settle(s, []state.Effect{c("new"), react}, seen, false, true)
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
	rd = Settle(s, nil, Seen{Markers: map[string]bool{"done": true, "owed1": true, "owed2": true, "refused": true}}, false, true)
	want(t, "nothing owed", len(rd.Effects), 0)
	want(t, "empty outbox", len(rd.State.Outbox), 0)
	want(t, "no write for classifications alone", rd.Write, false)
}

func TestDispatchedSettlesItsOutboxEntry(t *testing.T) {
	h, res := toDispatch(t)
	rd := Settle(res.State, res.Effects, Seen{}, res.Changed, false)
	h.st = rd.State
	session := h.st.Exec.Session
	if !announced(h.st.Outbox, session) {
		t.Fatalf("dispatch not announced: %+v", h.st.Outbox)
	}
	res = h.apply(Dispatched{Session: session, RunID: 777})
	want(t, "entry settled", announced(res.State.Outbox, session), false)
	want(t, "written", res.Changed, true)
}

func TestOwedReactions(t *testing.T) {
	stored := &state.State{Ledger: []state.LedgerEntry{{CommentID: 1, Outcome: OutApplied}, {CommentID: 2, Outcome: "rejected:unauthorized"},
		{CommentID: 3, Outcome: OutNotCommand}, {CommentID: 4, Outcome: OutApplied}, {CommentID: 5, Outcome: OutApplied}}}
	read := []Rollup{
		{ID: 1, Reactions: map[string]int{}},           // 👍 owed
		{ID: 2, Reactions: map[string]int{"+1": 1}},    // 😕 owed
		{ID: 3, Reactions: map[string]int{}},           // nothing owed
		{ID: 4, Reactions: map[string]int{reactUp: 2}}, // shown
		{ID: 5},                              // rollup unknown: left alone
		{ID: 6, Reactions: map[string]int{}}, // not in the ledger
	}
	var got []string
	for _, e := range OwedReactions(stored, read) {
		got = append(got, fmt.Sprintf("%d %s %v", e.Target, e.Reaction, e.Owed))
	}
	wantDeep(t, "owed", got, []string{"1 +1 true", "2 confused true"})
	want(t, "no stored state", len(OwedReactions(nil, read)), 0)
}

func TestManagedLabels(t *testing.T) {
	for _, l := range Labels(&state.State{Slug: "plan", Run: state.RunInProgress, Flow: "greenfield", Tasks: []state.Task{{Jira: state.JiraPending}}}) {
		want(t, l+" managed", Managed(l), true)
	}
	for _, l := range []string{"autopilot", "bug", "autopilot/other"} {
		want(t, l+" managed", Managed(l), false)
	}
}
