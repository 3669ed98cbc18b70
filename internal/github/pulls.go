package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	gh "github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// GetPull reads a pull request.
func (c *Client) GetPull(ctx context.Context, number int) (forge.Pull, error) {
	pr, _, err := c.gh.PullRequests.Get(transport.WithOp(ctx, transport.Op{Kind: "GET pull", ETag: true}), c.owner, c.name, number)
	if err != nil {
		return forge.Pull{}, c.mapErr(fmt.Sprintf("get pull #%d", number), err)
	}
	return forge.Pull{
		Number:  pr.GetNumber(),
		Title:   pr.GetTitle(),
		Body:    pr.GetBody(),
		State:   pr.GetState(),
		Merged:  merged(pr),
		Author:  toUser(pr.User),
		HeadSHA: pr.GetHead().GetSHA(),
		URL:     pr.GetHTMLURL(),
		// null when the fork was deleted: "" is never this repository.
		HeadRepo: pr.GetHead().GetRepo().GetFullName(),
		BaseRef:  pr.GetBase().GetRef(),
	}, nil
}

// merged prefers the single-PR "merged" flag; list payloads lack it, and
// there merged_at says it.
func merged(pr *gh.PullRequest) bool {
	if pr.Merged != nil {
		return *pr.Merged
	}
	return pr.MergedAt != nil
}

// ListReviews lists a pull request's reviews, oldest first; each page is
// read conditionally on its ETag.
func (c *Client) ListReviews(ctx context.Context, pr int) ([]forge.Review, error) {
	var out []forge.Review
	p := c.repoPath("pulls", strconv.Itoa(pr), "reviews")
	err := paginate(func(page int) (*gh.Response, error) {
		var batch []*gh.PullRequestReview
		resp, err := c.do(ctx, transport.Op{Kind: "GET reviews", ETag: true}, http.MethodGet, p+listQuery(nil, page), nil, &batch, "")
		for _, r := range batch {
			out = append(out, forge.Review{
				ID:          r.GetID(),
				PR:          pr,
				Reviewer:    toUser(r.User),
				State:       r.GetState(),
				Body:        r.GetBody(),
				SubmittedAt: r.GetSubmittedAt().Time,
				URL:         r.GetHTMLURL(),
				CommitSHA:   r.GetCommitID(),
			})
		}
		return resp, err
	})
	if err != nil {
		return nil, c.mapErr(fmt.Sprintf("list reviews of #%d", pr), err)
	}
	return out, nil
}

// ListChecks returns the check runs on sha followed by its commit statuses
// (the latest per context), both as forge.Check.
func (c *Client) ListChecks(ctx context.Context, sha string) ([]forge.Check, error) {
	out, err := c.listCheckRuns(ctx, sha, &gh.ListCheckRunsOptions{ListOptions: gh.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, c.mapErr(fmt.Sprintf("list check runs of %s", sha), err)
	}
	statusOpts := &gh.ListOptions{PerPage: 100}
	err = paginate(func(page int) (*gh.Response, error) {
		statusOpts.Page = page
		res, resp, err := c.gh.Repositories.GetCombinedStatus(transport.WithOp(ctx, transport.Op{Kind: "GET statuses", ETag: true}), c.owner, c.name, sha, statusOpts)
		if res != nil {
			for _, s := range res.Statuses {
				out = append(out, statusCheck(s))
			}
		}
		return resp, err
	})
	if err != nil {
		return nil, c.mapErr(fmt.Sprintf("get combined status of %s", sha), err)
	}
	return out, nil
}

// statusCheck maps a commit status (state error, failure, pending or
// success) onto the check-run vocabulary.
func statusCheck(s *gh.RepoStatus) forge.Check {
	ch := forge.Check{ID: s.GetID(), Name: s.GetContext(), URL: s.GetTargetURL(), Status: "completed"}
	switch s.GetState() {
	case "success":
		ch.Conclusion = "success"
	case "failure", "error":
		ch.Conclusion = "failure"
	default: // pending
		ch.Status = "in_progress"
	}
	return ch
}
