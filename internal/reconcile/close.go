package reconcile

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// closeJira moves the Jira issues of the tasks to done when the GitHub issue
// is closed and jira.transition_on_close is set (PRODUCT §10), when
// trackersync.Closing finds something to do: every created task not yet
// done is transitioned, in task order, and marked done in the state,
// written once at the end.
//
// Jira trouble never fails the run: a refused token pauses Jira for the
// issue and says so once; a rate limit leaves the rest to a later pass,
// with the Retry-After window kept in the state so no request lands inside
// it; an issue Jira will not move (no transition to done) is logged and
// tried again by a later pass. A redelivered closed event finds every task
// done and sends nothing.
func (ru *run) closeJira() error {
	s := ru.st
	closer, open := trackersync.Closing(ru.set.Config, ru.tracker, s, ru.loaded.Issue.State)
	if closer == nil {
		return nil
	}
	if ru.r.o.DryRun {
		ru.r.o.Print(fmt.Sprintf("dry-run: would move %d Jira issue(s) of #%d to done", open, ru.number))
		return nil
	}
	ru.outside = true
	ev, notes := trackersync.Close(ru.ctx, closer, ru.tracker, s, tracker.SyncOptions{Now: ru.r.o.Now, Sleep: ru.r.o.JiraSleep, MaxWait: ru.r.o.JiraMaxWait}, ru.r.o.Logger, ru.number)
	ru.notes = append(ru.notes, notes...)
	// ru.changed may already hold this pass's changes: the write below
	// carries them.
	if err := ru.apply(ev); err != nil {
		return err
	}
	if !ru.changed {
		return nil
	}
	ru.changed = false
	if err := ru.write(); err != nil {
		return fmt.Errorf("record jira transitions of #%d: %w", ru.number, err)
	}
	return nil
}
