package reconcile

import (
	"context"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
)

// router routes events and sweeps to this reconciler's Issue.
func (r *Reconciler) router() *route.Router {
	o := r.o
	return &route.Router{Forge: o.Forge, BotLogin: o.BotLogin, AppID: o.AppID, TriggerLabel: o.TriggerLabel, AnswerPermission: o.AnswerPermission,
		CheckButtons: o.CheckButtons, DryRun: o.DryRun, Now: o.Now, Logger: o.Logger, Print: o.Print, BudgetLow: o.BudgetLow,
		Config: r.cfg, ConfigPath: o.ConfigPath, Issue: r.Issue, Trusted: r.trusted, MergeGroup: r.mergeGroup, Lease: o.Lease}
}

// Handle routes one decoded event to "reconcile issue N" for every issue it
// concerns (route.Router.Handle). Irrelevant events return without any API
// call.
func (r *Reconciler) Handle(ctx context.Context, ev *ghevent.Event) ([]route.Outcome, error) {
	return r.router().Handle(ctx, ev)
}

// Sweep reconciles every open issue with the trigger label
// (route.Router.Sweep).
func (r *Reconciler) Sweep(ctx context.Context) ([]route.Outcome, error) {
	return r.router().Sweep(ctx)
}

// SweepEach is the one sweep loop, for callers that run each issue
// themselves (route.Router.SweepEach): the App, under the issue's lease.
func (r *Reconciler) SweepEach(ctx context.Context, how route.Sweeping) ([]route.Outcome, error) {
	return r.router().SweepEach(ctx, how)
}

func (r *Reconciler) hasTrigger(labels []string) bool { return r.router().HasTrigger(labels) }
