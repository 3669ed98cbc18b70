package reliability

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Run is one reconcile run: an Actions run for one delivery, or one App
// job.
type Run struct {
	ID       int
	Delivery Delivery
	Start    time.Time
	End      time.Time
	Outcomes []route.Outcome
	Err      error
	// Cancelled: the Actions concurrency group cancelled it before it ran.
	Cancelled bool
	// wall is when it ran in real time (runs overlap on the wall clock).
	wallStart, wallEnd time.Time
}

// summary renders a run's outcomes for traces.
func (r Run) summary() string {
	var parts []string
	for _, o := range r.Outcomes {
		if o.Issue == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("#%d %s/%s v%d", o.Issue, o.Step, o.Status, o.Version))
	}
	if r.Err != nil {
		parts = append(parts, "err="+r.Err.Error())
	}
	return strings.Join(parts, "; ")
}

// VersionObs is the newest valid state of an issue after a run.
type VersionObs struct {
	Run     int
	At      time.Time
	Version int64
	// Decisions and Applied are the comment ids of the recorded decisions
	// and of the ledger's applied entries.
	Decisions []int64
	Applied   []int64
	// Ledger is the number of ledger entries.
	Ledger int
}

// Runs returns every run so far, in the order they finished.
func (w *World) Runs() []Run {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Run(nil), w.runs...)
}

// Versions returns the states observed after every run, per issue.
func (w *World) Versions(n int) []VersionObs {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]VersionObs(nil), w.versions[n]...)
}

// ActionRun runs one delivery as an Actions run does: a new process, with
// a fresh GITHUB_TOKEN, adapter and reconciler, and nothing kept from any
// earlier run. It returns the run (Err holds the run's failure: the
// process would exit non-zero).
func (w *World) ActionRun(ctx context.Context, d Delivery) Run {
	id := w.newRun()
	token := w.token(id)
	ru := Run{ID: id, Delivery: d, Start: w.Clock.Now(), wallStart: time.Now()}
	ev, err := ghevent.Decode(d.Event, d.Payload)
	if err != nil {
		ru.Err = fmt.Errorf("decode %s: %w", d, err)
	} else {
		ru.Outcomes, ru.Err = w.reconcile(ctx, id, token, ev)
	}
	ru.End, ru.wallEnd = w.Clock.Now(), time.Now()
	w.finish(ru)
	return ru
}

// token registers the credentials of one run: a GITHUB_TOKEN in Action
// mode, an installation token of the App in App mode.
func (w *World) token(run int) string {
	if w.opts.Mode == ModeApp {
		tok := fmt.Sprintf("ghs_inst%05d", run)
		w.GH.AddToken(tok, fakegitIdentity())
		return tok
	}
	tok := fmt.Sprintf("ghs_run%05d", run)
	w.GH.AddActionsToken(tok, Repo)
	return tok
}

// reconcile wires a reconciler the way cmd/bot does and handles ev.
func (w *World) reconcile(ctx context.Context, run int, token string, ev *ghevent.Event) ([]route.Outcome, error) {
	ctx, kill := context.WithCancelCause(ctx)
	defer kill(nil)
	die := func() { kill(errKilled) }
	client := w.client(run, token, die)
	rec, err := reconcile.New(reconcile.Options{
		Forge: client, TrackerFor: w.trackerFor(run, die), AnswerPermission: "write", TriggerLabel: "autopilot",
		BotLogin: w.BotLogin, AppID: w.AppIDTrusted, StateKey: w.Key, Now: w.Clock.Now,
		TrackerSleep: w.Clock.Sleep,
		// Real time: overlapping runs are goroutines on the wall clock.
		ClaimSettle: claimSettle(w.opts.Mode),
		BudgetLow:   func() bool { st := client.Stats(); return st.RateRemaining >= 0 && st.RateRemaining < 50 },
	})
	if err != nil {
		return nil, err
	}
	return rec.Handle(ctx, ev)
}

// Sweep runs the scheduled sweep (an Actions run on schedule).
func (w *World) Sweep() Run { return w.ActionRun(context.Background(), w.SweepDelivery()) }

// MustSweep runs the sweep and fails the test if it fails.
func (w *World) MustSweep() Run {
	w.tb.Helper()
	r := w.Sweep()
	if r.Err != nil {
		w.tb.Fatalf("sweep: %v", r.Err)
	}
	return r
}

// MustRun runs a delivery in Action mode and fails the test if it fails.
func (w *World) MustRun(d Delivery) Run {
	w.tb.Helper()
	r := w.ActionRun(context.Background(), d)
	if r.Err != nil {
		w.tb.Fatalf("run %d for %s: %v", r.ID, d, r.Err)
	}
	return r
}

// finish records a run and the states it left.
func (w *World) finish(ru Run) {
	obs := map[int]VersionObs{}
	for _, n := range w.Issues() {
		if s := w.State(n); s != nil {
			obs[n] = observe(ru.ID, w.Clock.Now(), s)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs = append(w.runs, ru)
	for n, o := range obs {
		w.versions[n] = append(w.versions[n], o)
	}
}

func observe(run int, at time.Time, s *state.State) VersionObs {
	o := VersionObs{Run: run, At: at, Version: s.Version, Ledger: len(s.Ledger)}
	for _, d := range s.Decisions {
		o.Decisions = append(o.Decisions, d.CommentID)
	}
	for _, e := range s.Ledger {
		if e.Outcome == "applied" {
			o.Applied = append(o.Applied, e.CommentID)
		}
	}
	return o
}

// errKilled is why a run a hook killed ended.
var errKilled = errors.New("run killed (the process died)")

// errCancelled marks a run the concurrency group cancelled.
var errCancelled = errors.New("cancelled by the concurrency group")

// claimSettle is the wait before Jira creates (2 s in production, Action
// and App alike), shortened for the suite: runs here are goroutines, not
// processes a network apart. It matters in App mode too, where the suite's
// sweep is an Action run beside the App's workers (as during a migration).
func claimSettle(Mode) time.Duration { return 30 * time.Millisecond }
