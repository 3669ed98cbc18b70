package reconcile

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// closeJira answers the engine's QJiraClose (the GitHub issue is closed,
// the configuration asks for it and open tasks have tracker issues;
// PRODUCT §10): every created task not yet done is transitioned, in task
// order, and marked done in the state, which the engine has written once
// at the end.
//
// Jira trouble never fails the run: a refused token pauses Jira for the
// issue and says so once; a rate limit leaves the rest to a later pass,
// with the Retry-After window kept in the state so no request lands inside
// it; an issue Jira will not move (no transition to done) is logged and
// tried again by a later pass. A redelivered closed event finds every task
// done and sends nothing.
func (ru *run) closeJira(open int) error {
	closer, ok := ru.tracker.(tracker.Closer)
	if !ok {
		return nil
	}
	if ru.r.o.DryRun {
		ru.r.o.Print(fmt.Sprintf("dry-run: would move %d %s issue(s) of #%d to done", open, ru.caps.Name, ru.number))
		return nil
	}
	ru.outside = true
	ev, notes := trackersync.Close(ru.ctx, closer, ru.state(), trackersync.Options{Now: ru.r.o.Now, Sleep: ru.r.o.JiraSleep, MaxWait: ru.r.o.JiraMaxWait, Caps: ru.caps}, ru.r.o.Logger, ru.number)
	ru.notes = append(ru.notes, notes...)
	// The node may already hold this pass's changes: the write it hands
	// out next carries them.
	return ru.apply(ev)
}
