package forge

import "context"

// Deployments is implemented by forges that can answer deployment
// protection-rule requests (App mode's deploy gate, docs/deploy-gate.md).
type Deployments interface {
	// GetWorkflowRun reads one workflow run (its display title carries
	// the session token of a run autopilot dispatched).
	GetWorkflowRun(ctx context.Context, id int64) (WorkflowRun, error)
	// ReviewDeploymentRule answers the run's protection-rule request for
	// env: answer "approved" or "rejected" with comment, or, with answer
	// "", posts comment as a status report. A request decided already is
	// an ErrValidation (GitHub's 422).
	ReviewDeploymentRule(ctx context.Context, run int64, env, answer, comment string) error
	// ListDeploymentApprovals reads the run's review history: the
	// reviewers' decisions on the environment page, oldest first.
	ListDeploymentApprovals(ctx context.Context, run int64) ([]DeploymentApproval, error)
}

// DeploymentApproval is one reviewer's decision on the environment page
// (GitHub's review history of a run).
type DeploymentApproval struct {
	Environments []string
	State        string // approved, rejected
	User         string
	Comment      string
}

// DeployCall is one call a Sandbox recorded of ReviewDeploymentRule.
type DeployCall struct {
	Run         int64
	Environment string
	Answer      string // "" for a status report
	Comment     string
}
