package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// GetIssue reads an issue (or PR as an issue), conditionally on its ETag.
func (c *Client) GetIssue(ctx context.Context, number int) (forge.Issue, error) {
	var is gh.Issue
	_, err := c.do(ctx, transport.Op{Kind: "GET issue", ETag: true}, http.MethodGet,
		c.repoPath("issues", strconv.Itoa(number)), nil, &is, "")
	if err != nil {
		return forge.Issue{}, c.mapErr(fmt.Sprintf("get issue #%d", number), err)
	}
	return toIssue(&is), nil
}

// ListOpenIssues lists open issues carrying label, skipping pull requests.
func (c *Client) ListOpenIssues(ctx context.Context, label string) ([]forge.Issue, error) {
	opts := &gh.IssueListByRepoOptions{State: "open", Labels: []string{label}, ListOptions: gh.ListOptions{PerPage: 100}}
	var out []forge.Issue
	err := paginate(func(page int) (*gh.Response, error) {
		opts.Page = page
		issues, resp, err := c.gh.Issues.ListByRepo(transport.WithOp(ctx, transport.Op{Kind: "GET issues", ETag: true}), c.owner, c.name, opts)
		for _, is := range issues {
			if is.IsPullRequest() {
				continue
			}
			out = append(out, toIssue(is))
		}
		return resp, err
	})
	if err != nil {
		return nil, c.mapErr(fmt.Sprintf("list open issues labelled %q", label), err)
	}
	return out, nil
}

func toIssue(is *gh.Issue) forge.Issue {
	out := forge.Issue{
		Number:    is.GetNumber(),
		Title:     is.GetTitle(),
		Body:      is.GetBody(),
		State:     is.GetState(),
		IsPR:      is.IsPullRequest(),
		Author:    toUser(is.User),
		URL:       is.GetHTMLURL(),
		CreatedAt: is.GetCreatedAt().Time,
		Comments:  is.GetComments(),
	}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

func toUser(u *gh.User) forge.User {
	if u == nil {
		return forge.User{}
	}
	return forge.User{Login: u.GetLogin(), ID: u.GetID(), Type: u.GetType()}
}

// AddLabels adds labels to an issue (adding a present label is a no-op on
// GitHub, so the request is safe to retry). GitHub creates a label the
// repository lacks, grey and without a description; the response lists the
// issue's labels, so such a label is recognised there and painted with one
// PATCH. Labels that already existed are never touched, and once a label
// exists adding it costs the one request.
func (c *Client) AddLabels(ctx context.Context, number int, labels []forge.Label) error {
	if len(labels) == 0 {
		return nil
	}
	names := make([]string, len(labels))
	for i, l := range labels {
		names[i] = l.Name
	}
	if c.dryRun {
		c.dry("POST labels", "issue", number, "labels", names)
		return nil
	}
	got, _, err := c.gh.Issues.AddLabelsToIssue(transport.WithOp(ctx, transport.Op{Kind: "POST labels"}), c.owner, c.name, number, names)
	if err != nil {
		return c.mapErr(fmt.Sprintf("add labels %v to #%d", names, number), err)
	}
	for _, l := range labels {
		if !createdGrey(got, l.Name) || l.Color == "" || strings.EqualFold(l.Color, forge.LabelAutoColor) {
			continue
		}
		if err := c.paintLabel(ctx, l); err != nil {
			return err
		}
	}
	return nil
}

// createdGrey reports whether the labels GitHub returned show name the way
// GitHub creates a missing label: colour ededed, no description.
func createdGrey(got []*gh.Label, name string) bool {
	for _, l := range got {
		if strings.EqualFold(l.GetName(), name) {
			return strings.EqualFold(l.GetColor(), forge.LabelAutoColor) && l.GetDescription() == "" && !l.GetDefault()
		}
	}
	return false
}

// paintLabel sets a repository label's colour and description.
func (c *Client) paintLabel(ctx context.Context, l forge.Label) error {
	body := map[string]string{"color": strings.TrimPrefix(l.Color, "#"), "description": l.Description}
	// go-github v60 does not escape the label name; ours contain '/' and ':'.
	_, err := c.do(ctx, transport.Op{Kind: "PATCH label"}, http.MethodPatch, c.repoPath("labels", l.Name), body, nil, "")
	return c.mapErr(fmt.Sprintf("set the colour of label %q", l.Name), err)
}

// RemoveLabel removes a label from an issue; an absent label is success.
func (c *Client) RemoveLabel(ctx context.Context, number int, label string) error {
	if c.dryRun {
		c.dry("DELETE label", "issue", number, "label", label)
		return nil
	}
	// go-github v60 does not escape the label name; ours contain '/' and ':'.
	_, err := c.do(ctx, transport.Op{Kind: "DELETE label"}, http.MethodDelete,
		c.repoPath("issues", strconv.Itoa(number), "labels", label), nil, nil, "")
	if statusOf(err) == http.StatusNotFound {
		return nil
	}
	return c.mapErr(fmt.Sprintf("remove label %q from #%d", label, number), err)
}
