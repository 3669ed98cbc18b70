package outbox

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/testkit"
)

// A deploy answer announced in the outbox is carried again until its
// request is recorded sent (a crash between the state write and the
// callback, or a failed callback), and then no more: it is sent once.
func TestSettleCarriesADeployAnswerUntilItIsSent(t *testing.T) {
	d := state.DeployRequest{RunID: 9, Environment: "production", SHA: "abc", Answer: state.DeployApproved, Comment: "ok"}
	e := state.Effect{Kind: state.EffDeployAnswer, Marker: state.DeployMarker(9, "production"), RunID: 9, Environment: "production", Answer: state.DeployApproved, Body: "ok"}
	owed := &state.State{Deploys: []state.DeployRequest{d}, Outbox: []state.Effect{e}}
	rd := Settle(owed, nil, Seen{}, false, false)
	testkit.Want(t, "effects", len(rd.Effects), 1)
	if len(rd.Effects) == 1 {
		testkit.Want(t, "kind", rd.Effects[0].Kind, state.EffDeployAnswer)
		testkit.Want(t, "answer", rd.Effects[0].Answer, state.DeployApproved)
	}
	testkit.Want(t, "announced again", Announced(rd.State.Outbox, e.Marker), true)

	d.Sent = true
	sent := &state.State{Deploys: []state.DeployRequest{d}, Outbox: []state.Effect{e}}
	rd = Settle(sent, nil, Seen{}, false, false)
	testkit.Want(t, "effects once sent", len(rd.Effects), 0)
	testkit.Want(t, "announced once sent", Announced(rd.State.Outbox, e.Marker), false)
}

// The outbox entry of a deploy answer keeps the request it answers (run,
// environment, answer): the pass that carries it after a crash sends the
// same callback.
func TestDeployAnswerAnnouncedKeepsItsRequest(t *testing.T) {
	d := state.DeployRequest{RunID: 9, Environment: "production", SHA: "abc", Answer: state.DeployApproved, Comment: "ok"}
	e := state.Effect{Kind: state.EffDeployAnswer, Marker: state.DeployMarker(9, "production"), RunID: 9, Environment: "production", Answer: state.DeployApproved, Body: "ok"}
	rd := Settle(&state.State{Deploys: []state.DeployRequest{d}}, []state.Effect{e}, Seen{}, true, false)
	rd = Settle(rd.State, nil, Seen{}, false, false)
	testkit.WantDeep(t, "carried", rd.Effects, []state.Effect{e})
}
