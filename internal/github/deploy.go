package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// GetWorkflowRun reads one workflow run (GET …/actions/runs/{run_id}).
func (c *Client) GetWorkflowRun(ctx context.Context, id int64) (forge.WorkflowRun, error) {
	var r apiRun
	p := c.repoPath("actions", "runs", strconv.FormatInt(id, 10))
	if _, err := c.do(ctx, transport.Op{Kind: "GET workflow-run"}, http.MethodGet, p, nil, &r, ""); err != nil {
		return forge.WorkflowRun{}, c.mapErr(fmt.Sprintf("read workflow run %d", id), err)
	}
	path, _, _ := strings.Cut(r.Path, "@")
	wr := forge.WorkflowRun{ID: r.ID, Name: r.Name, DisplayTitle: r.DisplayTitle, Status: r.Status, Conclusion: r.Conclusion,
		Event: r.Event, HeadSHA: r.HeadSHA, Path: path, URL: r.HTMLURL, CreatedAt: r.CreatedAt}
	if r.HeadRepository != nil {
		wr.HeadRepo = r.HeadRepository.FullName
	}
	return wr, nil
}

// deployReview is the body of POST …/actions/runs/{run_id}/deployment_protection_rule:
// with state, the answer; without, a status report.
type deployReview struct {
	Environment string `json:"environment_name"`
	State       string `json:"state,omitempty"`
	Comment     string `json:"comment,omitempty"`
}

// ReviewDeploymentRule answers (or, with answer "", reports on) the run's
// deployment protection-rule request for env. GitHub answers 204; a
// request decided already is a 422 (forge.ErrValidation). Not retried on
// a transient failure: the caller's outbox sends it again.
func (c *Client) ReviewDeploymentRule(ctx context.Context, run int64, env, answer, comment string) error {
	if c.dryRun {
		c.dry("POST deployment-protection-rule", "run", run, "environment", env, "state", answer)
		return nil
	}
	p := c.repoPath("actions", "runs", strconv.FormatInt(run, 10), "deployment_protection_rule")
	o := transport.Op{Kind: "POST deployment-protection-rule", NoRetry: true}
	if _, err := c.do(ctx, o, http.MethodPost, p, deployReview{Environment: env, State: answer, Comment: comment}, nil, ""); err != nil {
		return c.mapErr(fmt.Sprintf("answer the deployment protection rule of run %d (%s)", run, env), err)
	}
	return nil
}

// apiApproval is one entry of a run's review history.
type apiApproval struct {
	Environments []struct {
		Name string `json:"name"`
	} `json:"environments"`
	State   string `json:"state"`
	Comment string `json:"comment"`
	User    *struct {
		Login string `json:"login"`
	} `json:"user"`
}

// ListDeploymentApprovals reads a run's review history
// (GET …/actions/runs/{run_id}/approvals): the reviewers' decisions on
// the environment page.
func (c *Client) ListDeploymentApprovals(ctx context.Context, run int64) ([]forge.DeploymentApproval, error) {
	var list []apiApproval
	p := c.repoPath("actions", "runs", strconv.FormatInt(run, 10), "approvals")
	if _, err := c.do(ctx, transport.Op{Kind: "GET run-approvals"}, http.MethodGet, p, nil, &list, ""); err != nil {
		return nil, c.mapErr(fmt.Sprintf("read the review history of run %d", run), err)
	}
	out := make([]forge.DeploymentApproval, 0, len(list))
	for _, a := range list {
		d := forge.DeploymentApproval{State: a.State, Comment: a.Comment}
		if a.User != nil {
			d.User = a.User.Login
		}
		for _, e := range a.Environments {
			d.Environments = append(d.Environments, e.Name)
		}
		out = append(out, d)
	}
	return out, nil
}
