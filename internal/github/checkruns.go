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

// CheckRunsNamed lists the check runs named name on sha (GET
// /repos/{o}/{r}/commits/{sha}/check-runs?check_name=…; checks: read), with
// the App that created each and its external_id: the Action tells its own
// PR check from a check run of the same name someone else wrote.
func (c *Client) CheckRunsNamed(ctx context.Context, sha, name string) ([]forge.Check, error) {
	out, err := c.listCheckRuns(ctx, sha, &gh.ListCheckRunsOptions{CheckName: gh.String(name), Filter: gh.String("all"), ListOptions: gh.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, c.mapErr(fmt.Sprintf("list check runs named %q on %s", name, sha), err)
	}
	return out, nil
}

// listCheckRuns lists the check runs on sha that opts select, every page.
func (c *Client) listCheckRuns(ctx context.Context, sha string, opts *gh.ListCheckRunsOptions) ([]forge.Check, error) {
	var out []forge.Check
	err := paginate(func(page int) (*gh.Response, error) {
		opts.Page = page
		res, resp, err := c.gh.Checks.ListCheckRunsForRef(transport.WithOp(ctx, transport.Op{Kind: "GET check-runs", ETag: true}), c.owner, c.name, sha, opts)
		if res != nil {
			for _, r := range res.CheckRuns {
				url := r.GetHTMLURL()
				if url == "" {
					url = r.GetDetailsURL()
				}
				out = append(out, forge.Check{ID: r.GetID(), Name: r.GetName(), Status: r.GetStatus(), Conclusion: r.GetConclusion(), URL: url,
					AppID: r.GetApp().GetID(), ExternalID: r.GetExternalID()})
			}
		}
		return resp, err
	})
	return out, err
}
