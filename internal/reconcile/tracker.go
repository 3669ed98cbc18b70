package reconcile

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
)

// trackerOp performs one tracker operation the engine handed out (the
// sync's or the close policy's, PRODUCT §10) against the tracker
// and steps its answer in (pass.TrackerOutcome): the call and its error
// mapping are trackersync.Perform's, every rule the engine's. Tracker
// trouble never fails the run: the answer says it and the engine decides.
// A dry run previews the work instead and sends nothing.
func (ru *run) trackerOp(op pass.TrackerOp) error {
	if ru.r.o.DryRun {
		if op.Close {
			ru.r.o.Print(fmt.Sprintf("dry-run: would move %d %s issue(s) of #%d to done", op.Tasks, ru.caps.Name, ru.number))
		} else {
			ru.r.o.Print(fmt.Sprintf("dry-run: would sync %d task(s) with %s", op.Tasks, ru.caps.Name))
		}
		return ru.node.Step(pass.TrackerOutcome{Op: op.Op, Previewed: true}, ru.r.o.Now())
	}
	ru.outside = true
	out := trackersync.Perform(ru.ctx, ru.tracker, op.Op, trackersync.Options{Now: ru.r.o.Now, Sleep: ru.r.o.TrackerSleep, Caps: ru.caps})
	return ru.node.Step(pass.TrackerOutcome{Op: op.Op, Outcome: out}, ru.r.o.Now())
}

// trackerLog logs what a tracker sync or close did.
func (ru *run) trackerLog(rp *pass.TrackerReport) {
	log := ru.r.o.Logger
	if res := rp.Sync; res != nil && res.Note != "" {
		log.Info("tracker sync", "issue", ru.number, "tracker", rp.Name, "created", res.Created, "found", res.Found,
			"failed", res.Failed, "ticked", res.Ticked, "waiting", res.Waiting, "requests", res.Requests, "note", res.Note)
	}
	if res := rp.Close; res != nil {
		log.Info("tracker transition on close", "issue", ru.number, "tracker", rp.Name, "closed", res.Closed, "left", res.Left,
			"failed", len(res.Failures), "requests", res.Requests, "note", res.Note)
		for _, f := range res.Failures {
			log.Warn("tracker issue not moved to done", "issue", ru.number, "tracker", rp.Name, "key", f.Key, "err", f.Err)
		}
	}
}

// claim makes sure the state write that records tracker creates (the
// engine's claim, pass.Ready.Claim) stands before they are sent
// (writes.ClaimStands): if another run's write replaced it, this pass
// sends nothing and starts over from that state (whose creates are that
// run's to send).
func (ru *run) claim() error {
	ok, err := writes.ClaimStands(ru.ctx, ru.r.o.Forge, ru.r.o.ClaimSettle, ru.wroteID, ru.wroteBody)
	if err != nil {
		return err
	}
	if !ok {
		ru.r.o.Logger.Warn("another run wrote the state before our Jira creates; sending nothing", "issue", ru.number)
		return errRecheck
	}
	return nil
}
