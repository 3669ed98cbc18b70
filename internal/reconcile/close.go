package reconcile

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// closeJira moves the Jira issues of the tasks to done when the GitHub issue
// is closed and jira.transition_on_close is set (PRODUCT §10). It acts only
// when the option is on, Jira is enabled for the run and not paused by a
// refused token, the tracker can transition (tracker.Closer), and the issue
// as loaded (the closed event's payload, or a fresh read) is closed; then
// every created task not yet done is transitioned, in task order, and marked
// done in the state, written once at the end.
//
// Jira trouble never fails the run: a refused token pauses Jira for the
// issue and says so once; a rate limit leaves the rest to a later pass,
// with the Retry-After window kept in the state so no request lands inside
// it; an issue Jira will not move (no transition to done) is logged and
// tried again by a later pass. A redelivered closed event finds every task
// done and sends nothing.
func (ru *run) closeJira() error {
	s := ru.st
	// close_children is transition_on_close for the sub-issue tracker.
	want := ru.set.Config.Jira.TransitionOnClose
	if isSubIssues(ru.tracker) {
		want = ru.set.Config.CloseChildren
	}
	if s == nil || ru.tracker == nil || !want {
		return nil
	}
	if s.JiraEnabled == nil || !*s.JiraEnabled || s.JiraNote == engine.PausedAuth || ru.loaded.issue.State != "closed" {
		return nil
	}
	closer, ok := ru.tracker.(tracker.Closer)
	if !ok {
		return nil
	}
	open := 0
	for _, t := range s.Tasks {
		if tracker.Closable(t) {
			open++
		}
	}
	if open == 0 {
		return nil
	}
	if ru.r.o.DryRun {
		ru.r.o.Print(fmt.Sprintf("dry-run: would move %d Jira issue(s) of #%d to done", open, ru.number))
		return nil
	}
	ru.outside = true
	maxWait := ru.r.o.JiraMaxWait
	if isSubIssues(ru.tracker) {
		maxWait = -1
	}
	res := tracker.CloseTasks(ru.ctx, closer, s.Tasks, tracker.SyncOptions{
		Now: ru.r.o.Now, Sleep: ru.r.o.JiraSleep, MaxWait: maxWait, NotBefore: s.JiraRetryAt,
	})
	ru.noteClosed(res)
	// ru.changed may already hold this pass's changes: the write below
	// carries them.
	// The engine pauses Jira and says so once on a refused token.
	if err := ru.apply(engine.JiraSynced{Tasks: res.Tasks, Note: s.JiraNote, Paused: res.Paused, Closing: true, Left: res.Left, RetryAt: res.RetryAt}); err != nil {
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

// noteClosed logs and notes what moving the tasks to done did.
func (ru *run) noteClosed(res tracker.CloseResult) {
	log := ru.r.o.Logger
	log.Info("jira transition on close", "issue", ru.number, "closed", res.Closed, "left", res.Left,
		"failed", len(res.Failures), "requests", res.Requests, "note", res.Note)
	for _, f := range res.Failures {
		log.Warn("jira issue not moved to done", "issue", ru.number, "jira", f.Key, "err", f.Err)
		ru.notes = append(ru.notes, "jira: "+f.String())
	}
	switch {
	case res.Paused == tracker.PausedAuth:
		ru.notes = append(ru.notes, "jira: transition on close paused: authentication failed")
	case res.Left > len(res.Failures):
		ru.notes = append(ru.notes, fmt.Sprintf("jira: %d issue(s) left to move to done: %s", res.Left-len(res.Failures), res.Note))
	}
}
