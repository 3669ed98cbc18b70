package appmode

import (
	"context"
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// The view answers deployment protection rules when its adapter can
// (forge.Deployments): the deploy gate is App mode's (docs/deploy-gate.md).

func (v *view) deployments() (forge.Deployments, error) {
	d, ok := v.Forge.(forge.Deployments)
	if !ok {
		return nil, fmt.Errorf("this forge cannot answer deployment protection rules: %w", forge.ErrNotFound)
	}
	return d, nil
}

// GetWorkflowRun implements forge.Deployments.
func (v *view) GetWorkflowRun(ctx context.Context, id int64) (forge.WorkflowRun, error) {
	d, err := v.deployments()
	if err != nil {
		return forge.WorkflowRun{}, err
	}
	return d.GetWorkflowRun(ctx, id)
}

// ReviewDeploymentRule implements forge.Deployments.
func (v *view) ReviewDeploymentRule(ctx context.Context, run int64, env, answer, comment string) error {
	d, err := v.deployments()
	if err != nil {
		return err
	}
	return d.ReviewDeploymentRule(ctx, run, env, answer, comment)
}

// ListDeploymentApprovals implements forge.Deployments.
func (v *view) ListDeploymentApprovals(ctx context.Context, run int64) ([]forge.DeploymentApproval, error) {
	d, err := v.deployments()
	if err != nil {
		return nil, err
	}
	return d.ListDeploymentApprovals(ctx, run)
}

var _ forge.Deployments = (*view)(nil)
