package reconcile

import (
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// pausedAuth is the state's JiraNote while a 401 pauses the sync (set by the
// engine on JiraSynced{Paused: "auth"}).
const pausedAuth = "paused: authentication failed"

// jiraRequest folds the QJiraSync queries of this pass into one request:
// want is true when any asked, cmd is the strongest reason given.
func (ru *run) jiraRequest() (want bool, cmd engine.JiraReason) {
	var rest []engine.Query
	for _, q := range ru.queries {
		if q.Kind != engine.QJiraSync {
			rest = append(rest, q)
			continue
		}
		want = true
		switch {
		case q.Jira == engine.JiraRetry:
			cmd = engine.JiraRetry
		case q.Jira == engine.JiraAsked && cmd != engine.JiraRetry:
			cmd = engine.JiraAsked
		}
	}
	ru.queries = rest
	return want, cmd
}

// jira runs the Jira outbox (tracker.Sync) when the engine asked for it, or
// tasks wait for Jira, or the sweep reads statuses back. Jira trouble never
// fails the run: the sync stops early and the state says why. Only a failed
// state write (Persist) is an error.
//
// Who may make it send: an explicit `/autopilot jira sync|retry` always (it
// also turns Jira back on after "Continue without Jira"); otherwise only
// while Jira is enabled and not paused by a 401, so a refused token is tried
// once, not at every event.
func (ru *run) jira() error {
	want, cmd := ru.jiraRequest()
	explicit := cmd == engine.JiraAsked || cmd == engine.JiraRetry
	s := ru.st
	tr := ru.tracker
	if s == nil || tr == nil || len(s.Tasks) == 0 || (s.JiraEnabled == nil && !explicit) {
		if want && tr == nil && s != nil {
			ru.notes = append(ru.notes, "jira sync requested but Jira is not configured")
		}
		return nil
	}
	enabled := s.JiraEnabled != nil && *s.JiraEnabled
	switch {
	case explicit:
	case !enabled:
		return nil
	case s.JiraNote == pausedAuth:
		return nil
	case !want && engine.PendingCount(s) == 0 && !ru.sweeping():
		return nil
	}
	if ru.r.o.DryRun {
		ru.r.o.Print(fmt.Sprintf("dry-run: would sync %d task(s) with Jira", engine.PendingCount(s)))
		return nil
	}
	// ru.changed may already hold this pass's changes: every write below
	// carries them.
	if explicit && !enabled {
		t := true
		s.JiraEnabled = &t
		ru.changed = true
	}
	tasks := s.Tasks
	if cmd == engine.JiraRetry {
		tasks = tracker.RetryFailed(tasks)
	}
	opts := tracker.SyncOptions{
		Now: ru.r.o.Now, Sleep: ru.r.o.JiraSleep, MaxWait: ru.r.o.JiraMaxWait, NotBefore: s.JiraRetryAt,
		SearchLag: time.Duration(ru.set.Config.Jira.SearchLag),
		Persist: func(ts []state.Task) error {
			if err := ru.apply(engine.JiraSynced{Tasks: ts, Note: ru.st.JiraNote, RetryAt: ru.st.JiraRetryAt}); err != nil {
				return err
			}
			ru.changed = false
			if err := ru.write(); err != nil {
				return err
			}
			return ru.claim()
		},
	}
	if isSubIssues(tr) {
		// GitHub lists are consistent reads (a short lag covers a create
		// still in flight), and the flow never waits out a GitHub limit:
		// the window is recorded and the next run goes on from it.
		opts.SearchLag, opts.MaxWait = 30*time.Second, -1
	}
	res, err := tracker.Sync(ru.ctx, tr, tasks, opts)
	if err != nil {
		return fmt.Errorf("jira sync of #%d: %w", ru.number, err)
	}
	// The Tasks section already says "Jira sync pending (n)"; the note
	// says why they wait.
	note := ""
	if res.Waiting > 0 {
		note = res.Note
		if note == "" {
			note = "waiting for the next sync"
		}
	}
	if res.Note != "" {
		ru.r.o.Logger.Info("jira sync", "issue", ru.number, "created", res.Created, "found", res.Found,
			"failed", res.Failed, "ticked", res.Ticked, "waiting", res.Waiting, "requests", res.Requests, "note", res.Note)
	}
	// Persist wrote the state before any create: write again only when the
	// outcome (or this pass, if nothing was created) changed it.
	if err := ru.apply(engine.JiraSynced{Tasks: res.Tasks, Paused: res.Paused, Note: note, RetryAt: res.RetryAt}); err != nil {
		return err
	}
	if ru.changed {
		ru.changed = false
		return ru.write()
	}
	return nil
}

// sweeping reports whether this pass is the scheduled sweep, which also
// reads the status of created issues back from Jira (so a task closed in
// Jira is ticked without waiting for another sync).
//
// The run does not yet carry its trigger (internal/reconcile/reconcile.go
// keeps Trigger.Sweep to itself), so outside an explicit sync the status is
// read back only while tasks wait for Jira.
func (ru *run) sweeping() bool { return ru.sweep }

// DefaultClaimSettle is how long a pass waits, after recording Jira creates
// in the state, before it reads the state back and sends them. Runs outside
// one lock (Action runs outside one concurrency group, the Action and the
// App during a migration) can overlap; GitHub has no compare-and-swap, so
// the wait is what keeps two of them from both creating the same Jira
// issues. It costs seconds only when creating.
const DefaultClaimSettle = 2 * time.Second

// ParseClaimSettle reads AUTOPILOT_CLAIM_SETTLE: empty means the default,
// "0s" turns the wait off (tests).
func ParseClaimSettle(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return DefaultClaimSettle, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("AUTOPILOT_CLAIM_SETTLE: want a duration such as 2s, got %q", v)
	}
	return d, nil
}

// claim makes sure the state write that records Jira creates stands before
// they are sent: after ClaimSettle it reads the state comment back, and if
// another run's write replaced it, this pass sends nothing and starts over
// from that state (whose creates are that run's to send).
func (ru *run) claim() error {
	d := ru.r.o.ClaimSettle
	if d <= 0 || ru.wroteID == 0 {
		return nil
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ru.ctx.Done():
		t.Stop()
		return ru.ctx.Err()
	}
	c, err := ru.r.o.Forge.GetComment(ru.ctx, ru.wroteID)
	if err != nil {
		return fmt.Errorf("read the state back before creating Jira issues: %w", err)
	}
	if !sameBody(c.Body, ru.wroteBody) {
		ru.r.o.Logger.Warn("another run wrote the state before our Jira creates; sending nothing", "issue", ru.number)
		return errRecheck
	}
	return nil
}
