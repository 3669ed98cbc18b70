package reconcile

import (
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// syncPlan takes the QJiraSync queries of this pass and asks the engine
// whether to sync.
func (ru *run) syncPlan() engine.SyncPlan {
	var asked, rest []engine.Query
	for _, q := range ru.queries {
		if q.Kind == engine.QJiraSync {
			asked = append(asked, q)
		} else {
			rest = append(rest, q)
		}
	}
	ru.queries = rest
	return engine.PlanSync(ru.set, ru.st, asked, ru.sweep)
}

// jira runs the Jira outbox (tracker.Sync) when the engine's plan says so
// (engine.PlanSync). Jira trouble never fails the run: the sync stops
// early and the state says why. Only a failed state write (Persist) is an
// error.
func (ru *run) jira() error {
	plan := ru.syncPlan()
	if plan.Unconfigured {
		ru.notes = append(ru.notes, "jira sync requested but Jira is not configured")
	}
	if !plan.Run {
		return nil
	}
	s, tr := ru.st, ru.tracker
	if ru.r.o.DryRun {
		ru.r.o.Print(fmt.Sprintf("dry-run: would sync %d task(s) with Jira", engine.PendingCount(s)))
		return nil
	}
	ru.outside = true
	tasks := s.Tasks
	if plan.Retry {
		tasks = tracker.RetryFailed(tasks)
	}
	res, err := tracker.Sync(ru.ctx, tr, tasks, ru.syncOptions(plan))
	if err != nil {
		return fmt.Errorf("jira sync of #%d: %w", ru.number, err)
	}
	if res.Note != "" {
		ru.r.o.Logger.Info("jira sync", "issue", ru.number, "created", res.Created, "found", res.Found,
			"failed", res.Failed, "ticked", res.Ticked, "waiting", res.Waiting, "requests", res.Requests, "note", res.Note)
	}
	note := trackersync.WaitingNote(res)
	// Persist wrote the state before any create: write again only when the
	// outcome (or this pass, if nothing was created) changed it.
	if err := ru.apply(engine.JiraSynced{Tasks: res.Tasks, Paused: res.Paused, Note: note, RetryAt: res.RetryAt, Enable: plan.Enable}); err != nil {
		return err
	}
	if ru.changed {
		ru.changed = false
		return ru.write()
	}
	return nil
}

// syncOptions are a sync's bounds; its Persist writes the state that
// claims the creates before any is sent (and waits for the claim to stand).
func (ru *run) syncOptions(plan engine.SyncPlan) tracker.SyncOptions {
	opts := tracker.SyncOptions{
		Now: ru.r.o.Now, Sleep: ru.r.o.JiraSleep, MaxWait: ru.r.o.JiraMaxWait, NotBefore: ru.st.JiraRetryAt,
		SearchLag: time.Duration(ru.set.Config.Jira.SearchLag),
		Persist: func(ts []state.Task) error {
			if err := ru.apply(engine.JiraSynced{Tasks: ts, Note: ru.st.JiraNote, RetryAt: ru.st.JiraRetryAt, Enable: plan.Enable}); err != nil {
				return err
			}
			ru.changed = false
			if err := ru.write(); err != nil {
				return err
			}
			return ru.claim()
		},
	}
	trackersync.Bound(ru.tracker, &opts)
	return opts
}

// DefaultClaimSettle is how long a pass waits before sending Jira creates
// (writes.DefaultClaimSettle); kept here for internal/wiring.
const DefaultClaimSettle = writes.DefaultClaimSettle

// ParseClaimSettle reads AUTOPILOT_CLAIM_SETTLE (writes.ParseClaimSettle);
// kept here for internal/wiring.
func ParseClaimSettle(v string) (time.Duration, error) { return writes.ParseClaimSettle(v) }

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
