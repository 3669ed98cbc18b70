// Package trackersync carries reconcile's side of the task trackers
// (PRODUCT §10): which tracker an issue uses, the bounds of a sync, the
// auth check's answer for the engine, and moving tasks to done when the
// issue closes. The engine decides whether to sync (engine.PlanSync); the
// outbox itself is tracker.Sync.
package trackersync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
	"github.com/autopilot-dev/autopilot/internal/tracker/subissues"
)

// Source builds an issue's tracker.
type Source struct {
	// SubIssues is the forge's sub-issue API (nil when it has none).
	SubIssues tracker.SubIssueAPI
	Now       func() time.Time
	// TrackerFor, when set, builds the tracker from the repository's
	// jira: settings; it overrides Tracker.
	TrackerFor func(config.Jira) (tracker.Tracker, error)
	// Tracker is the Jira tracker (nil when Jira is not configured).
	Tracker tracker.Tracker
	// BotLogin and AppID are our own bot: the only author whose task
	// issues the sub-issue tracker adopts (AppID 0: Action mode, the login
	// alone).
	BotLogin string
	AppID    int64
}

// For picks issue number's tracker (PRODUCT §10 "Trackers"): GitHub
// sub-issues when the config says tracker: github or someone chose them at
// the Jira authentication gate (State.Tracker), none for tracker: local,
// else Jira when it is configured. nil means tasks stay in the issue.
func (src Source) For(cfg *config.Config, st *state.State, number int) (tracker.Tracker, error) {
	kind := cfg.Tracker
	if st != nil && st.Tracker == state.TrackerGitHub {
		kind = config.TrackerGitHub
	}
	switch kind {
	case config.TrackerLocal:
		return nil, nil
	case config.TrackerGitHub:
		if src.SubIssues == nil {
			return nil, nil
		}
		var tasks []state.Task
		if st != nil {
			tasks = st.Tasks
		}
		return subissues.New(src.SubIssues, number, tasks, src.Now).Trust(src.BotLogin, src.AppID), nil
	}
	if src.TrackerFor != nil {
		return src.TrackerFor(cfg.Jira)
	}
	return src.Tracker, nil
}

// IsSubIssues reports whether tr is the GitHub sub-issue tracker, whose
// reads are consistent and whose waits the flow never sits out.
func IsSubIssues(tr tracker.Tracker) bool {
	_, ok := tr.(*subissues.Tracker)
	return ok
}

// SubIssueAPI is f's sub-issue API, nil when it has none.
func SubIssueAPI(f forge.Forge) tracker.SubIssueAPI {
	if sf, ok := f.(tracker.SubIssueForge); ok {
		return sf.SubIssueTracker()
	}
	return nil
}

// Name is tr's name in notes and errors: "GitHub" for sub-issues,
// "Jira" otherwise.
func Name(tr tracker.Tracker) string {
	if IsSubIssues(tr) {
		return "GitHub"
	}
	return "Jira"
}

// Bound names the tracker in a sync's notes and errors, and gives a sync on
// the sub-issue tracker its bounds: GitHub lists are consistent reads (a
// short lag covers a create still in flight), and the flow never waits out
// a GitHub limit: the window is recorded and the next run goes on from it.
// Other trackers keep their bounds.
func Bound(tr tracker.Tracker, opts *tracker.SyncOptions) {
	opts.Name = Name(tr)
	if IsSubIssues(tr) {
		opts.SearchLag, opts.MaxWait = 30*time.Second, -1
	}
}

// WaitingNote is what the state says about tasks a sync left waiting (the
// Tasks section already says "<tracker>: pending (n)"; the note says why).
func WaitingNote(res tracker.SyncResult) string {
	if res.Waiting == 0 {
		return ""
	}
	if res.Note == "" {
		return "waiting for the next sync"
	}
	return res.Note
}

// Auth answers the engine's Jira auth query with tr (nil: not
// configured). Only a refusal (tracker.AuthError) fails it: Jira down or
// slow is not refusing us, so the run carries on and the outbox retries;
// the GitHub side is never blocked.
func Auth(ctx context.Context, tr tracker.Tracker, log *slog.Logger, issue int) engine.JiraAuth {
	ev := engine.JiraAuth{OK: false, Detail: "Jira is not configured"}
	if tr == nil {
		return ev
	}
	var ae *tracker.AuthError
	switch err := tr.CheckAuth(ctx); {
	case err == nil:
		ev = engine.JiraAuth{OK: true}
	case errors.As(err, &ae):
		ev.Detail = tracker.Named(err, Name(tr)).Error()
	default:
		log.Warn("tracker auth check failed transiently", "issue", issue, "tracker", Name(tr), "err", err)
		ev = engine.JiraAuth{OK: true}
	}
	return ev
}

// CloseNotes logs what moving the tasks of issue to done did and returns
// the notes for the outcome.
func CloseNotes(log *slog.Logger, issue int, name string, res tracker.CloseResult) []string {
	log.Info("tracker transition on close", "issue", issue, "tracker", name, "closed", res.Closed, "left", res.Left,
		"failed", len(res.Failures), "requests", res.Requests, "note", res.Note)
	var notes []string
	for _, f := range res.Failures {
		log.Warn("tracker issue not moved to done", "issue", issue, "tracker", name, "key", f.Key, "err", f.Err)
		notes = append(notes, name+": "+f.String())
	}
	switch {
	case res.Paused == tracker.PausedAuth:
		notes = append(notes, name+": transition on close paused: authentication failed")
	case res.Left > len(res.Failures):
		notes = append(notes, fmt.Sprintf("%s: %d issue(s) left to move to done: %s", name, res.Left-len(res.Failures), res.Note))
	}
	return notes
}
