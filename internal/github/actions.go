package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// dispatchRequest is the workflow_dispatch body. return_run_details asks
// GitHub (since February 2026) to answer 200 with the run id.
type dispatchRequest struct {
	Ref              string            `json:"ref"`
	Inputs           map[string]string `json:"inputs,omitempty"`
	ReturnRunDetails bool              `json:"return_run_details,omitempty"`
}

// DispatchWorkflow triggers workflow_dispatch for workflow (file name or id)
// at ref and returns the run id (0 when the server gives none). go-github
// v60 predates run details, so the request is raw. A server that rejects
// return_run_details (older GHES: 400/422 naming it) gets the plain request
// once; transient failures are not retried, since a dispatch that committed
// would start a second run.
func (c *Client) DispatchWorkflow(ctx context.Context, workflow, ref string, inputs map[string]string) (int64, error) {
	what := fmt.Sprintf("dispatch workflow %q at %q", workflow, ref)
	if c.dryRun {
		c.dry("POST dispatch", "workflow", workflow, "ref", ref, "inputs", inputs)
		return 0, nil
	}
	p := c.repoPath("actions", "workflows", workflow, "dispatches")
	o := transport.Op{Kind: "POST dispatch", NoRetry: true}
	var res struct {
		WorkflowRunID int64 `json:"workflow_run_id"`
	}
	_, err := c.do(ctx, o, http.MethodPost, p, dispatchRequest{Ref: ref, Inputs: inputs, ReturnRunDetails: true}, &res, "")
	if err == nil {
		return res.WorkflowRunID, nil
	}
	if s := statusOf(err); (s == http.StatusBadRequest || s == http.StatusUnprocessableEntity) &&
		strings.Contains(c.classify(err).Error(), "return_run_details") {
		c.log.Info("github dispatch: server rejects return_run_details, dispatching without it", "workflow", workflow)
		_, err = c.do(ctx, o, http.MethodPost, p, dispatchRequest{Ref: ref, Inputs: inputs}, nil, "")
		if err == nil {
			return 0, nil
		}
	}
	return 0, c.mapErr(what, err)
}

// apiRun is a workflow run; go-github v60's WorkflowRun lacks "path".
type apiRun struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	DisplayTitle string    `json:"display_title"`
	Status       string    `json:"status"`
	Conclusion   string    `json:"conclusion"`
	Event        string    `json:"event"`
	HeadSHA      string    `json:"head_sha"`
	Path         string    `json:"path"`
	HTMLURL      string    `json:"html_url"`
	CreatedAt    time.Time `json:"created_at"`
	// HeadRepository is where the run's head came from (a fork, or the
	// repository itself).
	HeadRepository *struct {
		FullName string `json:"full_name"`
	} `json:"head_repository"`
}

// ListWorkflowRuns lists the runs of workflow (file name or id) created at
// or after since (all runs when since is zero), newest first as GitHub
// returns them.
func (c *Client) ListWorkflowRuns(ctx context.Context, workflow string, since time.Time) ([]forge.WorkflowRun, error) {
	q := url.Values{}
	if !since.IsZero() {
		q.Set("created", ">="+since.UTC().Format(time.RFC3339))
	}
	p := c.repoPath("actions", "workflows", workflow, "runs")
	var out []forge.WorkflowRun
	err := paginate(func(page int) (*gh.Response, error) {
		var batch struct {
			WorkflowRuns []apiRun `json:"workflow_runs"`
		}
		resp, err := c.do(ctx, transport.Op{Kind: "GET workflow-runs", ETag: true}, http.MethodGet, p+listQuery(q, page), nil, &batch, "")
		for _, r := range batch.WorkflowRuns {
			path, _, _ := strings.Cut(r.Path, "@") // ".github/workflows/x.yml@main"
			wr := forge.WorkflowRun{
				ID: r.ID, Name: r.Name, DisplayTitle: r.DisplayTitle, Status: r.Status,
				Conclusion: r.Conclusion, Event: r.Event, HeadSHA: r.HeadSHA, Path: path,
				URL: r.HTMLURL, CreatedAt: r.CreatedAt,
			}
			if r.HeadRepository != nil {
				wr.HeadRepo = r.HeadRepository.FullName
			}
			out = append(out, wr)
		}
		return resp, err
	})
	if err != nil {
		return nil, c.mapErr(fmt.Sprintf("list runs of workflow %q", workflow), err)
	}
	return out, nil
}
