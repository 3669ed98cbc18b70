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
		Config: r.cfg, ConfigPath: o.ConfigPath, Issue: r.Issue, Trusted: r.trusted, MergeGroup: r.mergeGroup}
}

// Handle routes one decoded event to "reconcile issue N" for every issue it
// concerns (route.Router.Handle). Irrelevant events return without any API
// call.
func (r *Reconciler) Handle(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	return r.router().Handle(ctx, ev)
}

// Sweep reconciles every open issue with the trigger label
// (route.Router.Sweep).
func (r *Reconciler) Sweep(ctx context.Context) ([]Outcome, error) {
	return r.router().Sweep(ctx)
}

// SweepTarget is one issue a sweep reconciles and the trigger to use; an
// alias for App mode, which runs each under the issue's lease.
type SweepTarget = route.SweepTarget

// SweepTargets lists what a sweep reconciles, for callers that run each
// issue themselves (route.Router.SweepTargets).
func (r *Reconciler) SweepTargets(ctx context.Context) ([]SweepTarget, error) {
	return r.router().SweepTargets(ctx)
}

func (r *Reconciler) hasTrigger(labels []string) bool { return r.router().HasTrigger(labels) }
