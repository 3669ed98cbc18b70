// Package dispatch sends the workflow dispatches the engine announces
// (state.EffDispatch), and finds the run of one whose answer was lost.
// The engine settles the outbox entry from what it reports.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Adopt looks for a run an earlier dispatch of e may have started although
// its answer was lost: it lists the runs since the engine's window and
// lets the engine pick (engine.AdoptRun). err: the runs could not be
// listed (the dispatch stays pending). now is when the pass looks; st the
// state of issue.
func Adopt(ctx context.Context, f forge.Forge, log *slog.Logger, issue int, e state.Effect, set machine.Settings, st *state.State, now time.Time) (int64, bool, error) {
	runs, err := f.ListWorkflowRuns(ctx, e.Workflow, engine.AdoptSince(st, now))
	if err != nil {
		return 0, false, err
	}
	seen := make([]evidence.Run, len(runs))
	for i, wr := range runs {
		seen[i] = evidence.Run{ID: wr.ID, DisplayTitle: wr.DisplayTitle, Path: wr.Path, Event: wr.Event, HeadRepo: wr.HeadRepo, CreatedAt: wr.CreatedAt}
	}
	id, found, skipped := engine.AdoptRun(set, st, e.Marker, seen)
	for run, why := range skipped {
		log.Info("run carrying the session token not adopted", "issue", issue, "run", run, "why", why)
	}
	return id, found, nil
}

// Send dispatches e's workflow at its ref (engine.DispatchRef). A failed
// read of the default branch is handled like a failed dispatch (Classify
// tells the transient ones).
func Send(ctx context.Context, f forge.Forge, e state.Effect) (int64, error) {
	ref, err := Ref(ctx, f, e.Ref)
	if err != nil {
		return 0, err
	}
	return f.DispatchWorkflow(ctx, e.Workflow, ref, e.Inputs)
}

// Classify maps a forge error to the class the engine decides from: 5xx
// and timeouts are transient, rate limits their own class, anything else
// refused.
func Classify(err error) engine.ErrClass {
	var te *forge.TransientError
	var rl *forge.RateLimitError
	switch {
	case err == nil:
		return engine.ErrNone
	case errors.As(err, &rl):
		return engine.ErrRateLimited
	case errors.As(err, &te):
		return engine.ErrTransient
	}
	return engine.ErrRefused
}

// defaultBrancher is implemented by forges that can tell the repository's
// default branch (internal/github: GET /repos/{owner}/{repo}).
type defaultBrancher interface {
	DefaultBranch(ctx context.Context) (string, error)
}

// Ref is the git ref a dispatch runs at (engine.DispatchRef): it reads the
// repository's default branch when the engine needs it and the forge can
// tell it. A failed read is an error.
func Ref(ctx context.Context, f forge.Forge, ref string) (string, error) {
	db, known := f.(defaultBrancher)
	var def string
	if known && engine.DispatchNeedsDefaultBranch(ref) {
		b, err := db.DefaultBranch(ctx)
		if err != nil {
			return "", fmt.Errorf("read the default branch to dispatch at: %w", err)
		}
		def = b
	}
	return engine.DispatchRef(ref, def, known), nil
}

// Run sends e, or, when it is sent again (e.Retry), first lists the runs
// an earlier send may have started (Adopt; engine.DispatchRetried decides).
// It returns the outcome for the engine, or ok false when the dispatch
// waits in the outbox (the runs could not be listed, or the engine defers
// the send: engine.DispatchSent), with a note saying why.
func Run(ctx context.Context, f forge.Forge, log *slog.Logger, issue int, e state.Effect, set machine.Settings, st *state.State, now time.Time) (ev events.Dispatched, note string, ok bool) {
	if e.Retry {
		id, found, err := Adopt(ctx, f, log, issue, e, set, st, now)
		listErr := ""
		if err != nil {
			listErr = err.Error()
		}
		if ev, note, ok, done := engine.DispatchRetried(e.Marker, id, found, listErr); done {
			return ev, note, ok
		}
	}
	id, err := Send(ctx, f, e)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return engine.DispatchSent(e.Marker, id, Classify(err), msg)
}
