package trackersync

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// Sync runs the tracker outbox (Outbox) over the state's tasks (only
// the failed ones again on a retry) and returns its outcome for the
// engine. Tracker trouble never fails it: the sync stops early and the
// outcome says why; only a failed state write (opts.Persist) is an error.
func Sync(ctx context.Context, tr tracker.Tracker, st *state.State, plan events.SyncPlan, opts Options, log *slog.Logger, issue int) (events.JiraSynced, error) {
	tasks := st.Tasks
	if plan.Retry {
		tasks = tasksync.RetryFailed(tasks)
	}
	res, err := Outbox(ctx, tr, tasks, opts)
	if err != nil {
		return events.JiraSynced{}, fmt.Errorf("%s sync of #%d: %w", opts.Name, issue, err)
	}
	if res.Note != "" {
		log.Info("tracker sync", "issue", issue, "tracker", opts.Name, "created", res.Created, "found", res.Found,
			"failed", res.Failed, "ticked", res.Ticked, "waiting", res.Waiting, "requests", res.Requests, "note", res.Note)
	}
	return events.JiraSynced{Tasks: res.Tasks, Paused: res.Paused, Note: WaitingNote(res), RetryAt: res.RetryAt, Enable: plan.Enable}, nil
}

// Close moves the tasks' tracker issues to done (CloseAll) with
// closer and returns the outcome for the engine, with notes for the
// outcome. opts.Caps bound it (a tracker with NoWaits is never waited
// for); opts.MaxWait bounds the others' waits.
func Close(ctx context.Context, closer tracker.Closer, s *state.State, opts Options, log *slog.Logger, issue int) (events.JiraSynced, []string) {
	opts.NotBefore = s.TrackerRetryAt
	res := CloseAll(ctx, closer, s.Tasks, opts)
	notes := CloseNotes(log, issue, opts.rules(closer).Name, res)
	// The engine pauses Jira and says so once on a refused token.
	return events.JiraSynced{Tasks: res.Tasks, Note: s.TrackerNote, Paused: res.Paused, Closing: true, Left: res.Left, RetryAt: res.RetryAt}, notes
}
