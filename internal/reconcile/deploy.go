package reconcile

import (
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/reconcile/deploys"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// deploy answers, or reports on, a deployment protection-rule request
// (deploys.Send) and steps the answer's outcome in: the engine records
// the request sent and the next Ready writes it.
func (ru *run) deploy(e state.Effect) error {
	r := ru.r
	ev, note, err := deploys.Send(ru.ctx, r.o.Forge, e, r.o.DryRun, r.o.Print)
	if note != "" {
		ru.notes = append(ru.notes, note)
	}
	if err != nil || ev == nil {
		return err
	}
	return ru.apply(*ev)
}

// readDeployApprovals answers the engine's QDeployApprovals: the run's
// review history (deploys.Approvals), or the class of the failure.
func (ru *run) readDeployApprovals(run int64) error {
	list, err := deploys.Approvals(ru.ctx, ru.r.o.Forge, run)
	ev := events.DeployApprovalsRead{RunID: run, Approvals: list}
	if err != nil {
		ev.Fail = readFail(err)
		ru.notes = append(ru.notes, err.Error())
	}
	return ru.apply(ev)
}
