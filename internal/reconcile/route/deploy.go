package route

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile/deploys"
	"github.com/autopilot-dev/autopilot/internal/reconcile/repofiles"
)

// deploymentRule routes a deployment protection-rule request
// (docs/deploy-gate.md). A run autopilot dispatched carries its session
// token in its name, so the run is read (one call) and the request goes
// to that issue; else to the autopilot issues its pull requests link,
// never by title. The engine of each issue matches it exactly
// (engine/deploygate: the recorded run id or session first) and decides.
// A request of no autopilot issue is answered by the engine without a
// state, by deploy_gate.unmatched.
func (r *Router) deploymentRule(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	d, ok := ev.Carries.(events.DeploymentRequested)
	if !ok {
		return nil, nil
	}
	if dp, ok := r.Forge.(forge.Deployments); ok && d.RunID != 0 {
		run, err := dp.GetWorkflowRun(ctx, d.RunID)
		if err != nil && !errors.Is(err, forge.ErrNotFound) {
			return nil, fmt.Errorf("read the deploying run %d: %w", d.RunID, err)
		}
		if n, ok := sessionIssue(run.DisplayTitle); err == nil && ok {
			d.Session = sessionToken(run.DisplayTitle)
			out, err := r.leased(ctx, n, Trigger{Events: []events.Event{d}})
			return []Outcome{out}, err
		}
	}
	var managed []forge.Issue
	for _, n := range ev.LinkedIssues {
		is, err := r.Forge.GetIssue(ctx, n)
		if errors.Is(err, forge.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read linked issue #%d: %w", n, err)
		}
		if !is.IsPR && is.State != "closed" && r.HasTrigger(is.Labels) {
			managed = append(managed, is)
		}
	}
	for _, is := range managed {
		d.Linked = append(d.Linked, is.Number)
	}
	if len(managed) == 0 {
		return nil, r.unmatchedDeploy(ctx, d)
	}
	var outs []Outcome
	var errs []error
	for _, is := range managed {
		is := is
		out, err := r.leased(ctx, is.Number, Trigger{Issue: &is, Events: []events.Event{d}})
		outs = append(outs, out)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return outs, errors.Join(errs...)
}

// unmatchedDeploy has the engine answer a request of no autopilot issue
// (deploy_gate.unmatched) and sends its answer.
func (r *Router) unmatchedDeploy(ctx context.Context, d events.DeploymentRequested) error {
	cfg := r.Config
	if cfg == nil {
		c, err := repofiles.ReadConfig(ctx, r.Forge, r.ConfigPath)
		if err != nil {
			return err
		}
		cfg = c.Config
	}
	set := machine.Settings{Config: cfg, AnswerPermission: r.AnswerPermission, TriggerLabel: r.TriggerLabel, Repo: r.Forge.Repo()}
	n := pass.New(set, nil, pass.Options{})
	if err := n.Step(d, r.Now()); err != nil {
		return err
	}
	return pass.Drive(n, func() pass.Input { return pass.Input{Now: r.Now()} }, func(rd pass.Ready) error {
		for _, e := range rd.Effects {
			_, note, err := deploys.Send(ctx, r.Forge, e, r.DryRun, r.Print)
			if note != "" {
				r.Logger.Info("deploy gate", "note", note)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// sessionToken is the session token of a display title ("autopilot
// ap-12-deploy-c1-a1-s7" → "ap-12-deploy-c1-a1-s7").
func sessionToken(title string) string {
	for _, f := range strings.Fields(title) {
		if strings.HasPrefix(f, "ap-") {
			return f
		}
	}
	return ""
}
