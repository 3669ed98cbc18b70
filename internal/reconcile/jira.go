package reconcile

import (
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// jira answers the engine's QJiraSync: it runs the Jira outbox
// (trackersync.Sync) with the engine's plan. Jira trouble never fails the
// run: the sync stops early and the state says why. Only a failed state
// write (Persist) is an error.
func (ru *run) jira(plan events.SyncPlan) error {
	if ru.r.o.DryRun {
		st := ru.state()
		ru.r.o.Print(fmt.Sprintf("dry-run: would sync %d task(s) with %s", outbox.PendingCount(st), ru.caps.Name))
		// Reported back as a sync that sent nothing, so the closes are
		// previewed next.
		return ru.apply(events.JiraSynced{Tasks: st.Tasks, Note: st.TrackerNote, RetryAt: st.TrackerRetryAt})
	}
	ru.outside = true
	ev, err := trackersync.Sync(ru.ctx, ru.tracker, ru.state(), plan, ru.syncOptions(plan), ru.r.o.Logger, ru.number)
	if err != nil {
		return err
	}
	// Persist wrote the state before any create; the engine has the
	// outcome written when it (or this pass, if nothing was created)
	// changed it.
	return ru.apply(ev)
}

// syncOptions are a sync's bounds; its Persist has the engine write the
// state that claims the creates (one carrier round, pass.WriteNow) before
// any is sent, and waits for the claim to stand.
func (ru *run) syncOptions(plan events.SyncPlan) trackersync.Options {
	st := ru.state()
	opts := trackersync.Options{
		Now: ru.r.o.Now, Sleep: ru.r.o.JiraSleep, MaxWait: ru.r.o.JiraMaxWait, NotBefore: st.TrackerRetryAt,
		SearchLag: time.Duration(ru.set.Config.Jira.SearchLag), Caps: ru.caps,
		Persist: func(ts []state.Task) error {
			st := ru.state()
			if err := ru.apply(events.JiraSynced{Tasks: ts, Note: st.TrackerNote, RetryAt: st.TrackerRetryAt, Enable: plan.Enable}); err != nil {
				return err
			}
			if err := ru.node.Step(pass.WriteNow{}, ru.r.o.Now()); err != nil {
				return err
			}
			if err := ru.round(); err != nil {
				return err
			}
			return ru.claim()
		},
	}
	return opts
}

// claim makes sure the state write that records Jira creates stands before
// they are sent (writes.ClaimStands): if another run's write replaced it,
// this pass sends nothing and starts over from that state (whose creates
// are that run's to send).
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
