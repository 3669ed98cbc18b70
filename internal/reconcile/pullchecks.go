package reconcile

import (
	"context"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile/prcheck"
)

// The PR check (PRODUCT §14): the engine decides what each trusted linked
// PR's head shows (checkview.DesiredChecks); this file only reads the PR facts
// it needs and creates the check runs. What a check run last showed is
// recorded in the state as a hash, so a pass where nothing shown changed
// makes no call, and one that changed makes one per PR.

// getPull reads PR n once per pass: a review's PR, read to check its
// head, is the PR its evidence step reads next.
func (ru *run) getPull(n int) (forge.Pull, error) {
	if pr, ok := ru.pulls[n]; ok {
		return pr, nil
	}
	pr, err := ru.r.o.Forge.GetPull(ru.ctx, n)
	if err != nil {
		return pr, err
	}
	if ru.pulls == nil {
		ru.pulls = map[int]forge.Pull{}
	}
	ru.pulls[n] = pr
	return pr, nil
}

// publishChecks creates the check runs the engine planned
// (prcheck.Publisher); settle writes the pending marks (set or cleared)
// after.
func (ru *run) publishChecks() error {
	cw, ok := ru.r.o.Forge.(forge.CheckWriter)
	if !ok {
		return nil
	}
	p := prcheck.Publisher{Checks: cw, Logger: ru.r.o.Logger, Issue: ru.number, St: ru.state, Apply: ru.applyCheck, Links: ru.checkLinks}
	notes, err := p.Publish(ru.ctx, ru.checks)
	ru.notes = append(ru.notes, notes...)
	if err != nil {
		return err
	}
	ru.checks = nil
	return nil
}

// checkLinks are where c's check run points: the state comment, and the
// open gate's comment when the thread shows it.
func (ru *run) checkLinks(c checkview.CheckRun) prcheck.Links {
	var l prcheck.Links
	if sc := ru.loaded.StateComment; sc != nil {
		l.State = sc.URL
	}
	if gc, ok := ru.loaded.Markers[prose.GateMarker(c.Gate)]; ok && c.Gate != "" {
		l.Gate, l.GateSet = gc.URL, true
	}
	return l
}

func (ru *run) applyCheck(ev events.CheckShown) error { return ru.apply(ev) }

// mergeGroup answers a merge queue's request for checks
// (prcheck.MergeGroup) with the configured check name. Only check runs
// this App (in Action mode, GitHub Actions) created count. No issue is
// touched.
func (r *Reconciler) mergeGroup(ctx context.Context, ev *ghevent.Event) error {
	mg := ev.MergeGroup
	cw, ok := r.o.Forge.(forge.CheckWriter)
	if mg == nil || mg.PR == 0 || !ok || r.o.DryRun {
		return nil
	}
	cfg := r.cfg
	if cfg == nil {
		sc, err := r.readConfig(ctx)
		if err != nil {
			return err
		}
		cfg = sc.Config
	}
	return prcheck.MergeGroup(ctx, r.o.Forge, cw, checkview.CheckName(cfg), r.o.AppID, mg)
}
