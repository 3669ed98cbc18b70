package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// CreateCheckRun creates a check run (POST /repos/{o}/{r}/check-runs; the
// token needs checks: write, which only a GitHub App token, GITHUB_TOKEN
// included, can have). Not retried on a transient failure: a second POST
// would be a second check run; the next state change shows the check again.
func (c *Client) CreateCheckRun(ctx context.Context, in forge.CheckRunOut) (int64, error) {
	opt := gh.CreateCheckRunOptions{
		Name:    in.Name,
		HeadSHA: in.HeadSHA,
		Status:  gh.String(in.Status),
		Output:  &gh.CheckRunOutput{Title: gh.String(in.Title), Summary: gh.String(in.Summary)},
	}
	if in.Conclusion != "" {
		opt.Conclusion = gh.String(in.Conclusion)
	}
	if in.ExternalID != "" {
		opt.ExternalID = gh.String(in.ExternalID)
	}
	if in.DetailsURL != "" {
		opt.DetailsURL = gh.String(in.DetailsURL)
	}
	for _, a := range in.Actions {
		opt.Actions = append(opt.Actions, &gh.CheckRunAction{Label: a.Label, Description: a.Description, Identifier: a.Identifier})
	}
	run, _, err := c.gh.Checks.CreateCheckRun(transport.WithOp(ctx, transport.Op{Kind: "POST check-run", NoRetry: true}), c.owner, c.name, opt)
	if err != nil {
		return 0, c.mapErr(fmt.Sprintf("create check run %q on %s", in.Name, in.HeadSHA), err)
	}
	return run.GetID(), nil
}
