// Package deploys carries out the deploy gate's effects (App mode,
// docs/deploy-gate.md): it posts a protection-rule request's answer or
// status report and says what became of the answer, as an engine event.
// It decides nothing: the engine chose the answer, and the outbox makes
// it owed until the outcome is stored.
package deploys

import (
	"context"
	"errors"
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Send performs e (state.EffDeployAnswer or EffDeployReport) on f. An
// answer's outcome comes back as the event to step in: taken (204), or
// decided already (422: this answer before a crash, or a person on the
// environment page) — both are success. Any other failure is returned and
// the answer stays owed. A status report is best effort: its failure is
// only noted.
func Send(ctx context.Context, f forge.Forge, e state.Effect, dryRun bool, print func(string)) (*events.DeployAnswered, string, error) {
	if dryRun {
		print(fmt.Sprintf("dry-run: would answer the deployment protection rule of run %d (%s): %q %s", e.RunID, e.Environment, e.Answer, e.Body))
		return nil, "", nil
	}
	d, ok := f.(forge.Deployments)
	if !ok {
		return nil, "this forge cannot answer deployment protection rules", nil
	}
	err := d.ReviewDeploymentRule(ctx, e.RunID, e.Environment, e.Answer, e.Body)
	if e.Kind == state.EffDeployReport {
		if err != nil {
			return nil, fmt.Sprintf("status report on run %d (%s) not posted: %v", e.RunID, e.Environment, err), nil
		}
		return nil, "", nil
	}
	switch {
	case err == nil:
		return &events.DeployAnswered{Marker: e.Marker, Done: true}, "", nil
	case errors.Is(err, forge.ErrValidation):
		return &events.DeployAnswered{Marker: e.Marker, Done: true, AlreadyDecided: true},
			fmt.Sprintf("run %d (%s) was decided already (422); answer %s counted as given", e.RunID, e.Environment, e.Answer), nil
	}
	return nil, "", fmt.Errorf("answer the deployment protection rule of run %d (%s): %w", e.RunID, e.Environment, err)
}

// Approvals reads a run's review history (the environment page's
// reviewers) as the engine reads it; a forge that cannot is not found.
func Approvals(ctx context.Context, f forge.Forge, run int64) ([]events.DeployApproval, error) {
	d, ok := f.(forge.Deployments)
	if !ok {
		return nil, fmt.Errorf("review history of run %d: %w", run, forge.ErrNotFound)
	}
	list, err := d.ListDeploymentApprovals(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("review history of run %d: %w", run, err)
	}
	out := make([]events.DeployApproval, 0, len(list))
	for _, a := range list {
		out = append(out, events.DeployApproval{Environments: a.Environments, State: a.State, User: a.User, Comment: a.Comment})
	}
	return out, nil
}
