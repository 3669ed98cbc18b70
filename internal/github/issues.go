package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// GetIssue reads an issue (or PR as an issue), conditionally on its ETag.
func (c *Client) GetIssue(ctx context.Context, number int) (forge.Issue, error) {
	var is gh.Issue
	_, err := c.do(ctx, op{kind: "GET issue", etag: true}, http.MethodGet,
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
		issues, resp, err := c.gh.Issues.ListByRepo(withOp(ctx, op{kind: "GET issues"}), c.owner, c.name, opts)
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
// GitHub, so the request is safe to retry).
func (c *Client) AddLabels(ctx context.Context, number int, labels []string) error {
	if len(labels) == 0 {
		return nil
	}
	if c.dryRun {
		c.dry("POST labels", "issue", number, "labels", labels)
		return nil
	}
	_, _, err := c.gh.Issues.AddLabelsToIssue(withOp(ctx, op{kind: "POST labels"}), c.owner, c.name, number, labels)
	return c.mapErr(fmt.Sprintf("add labels %v to #%d", labels, number), err)
}

// RemoveLabel removes a label from an issue; an absent label is success.
func (c *Client) RemoveLabel(ctx context.Context, number int, label string) error {
	if c.dryRun {
		c.dry("DELETE label", "issue", number, "label", label)
		return nil
	}
	// go-github v60 does not escape the label name; ours contain '/' and ':'.
	_, err := c.do(ctx, op{kind: "DELETE label"}, http.MethodDelete,
		c.repoPath("issues", strconv.Itoa(number), "labels", label), nil, nil, "")
	if statusOf(err) == http.StatusNotFound {
		return nil
	}
	return c.mapErr(fmt.Sprintf("remove label %q from #%d", label, number), err)
}

// EnsureLabels creates the labels the repository lacks. The repository's
// labels are listed once per Client; a creation that races another
// ("already_exists") counts as success.
func (c *Client) EnsureLabels(ctx context.Context, labels []forge.Label) error {
	c.labelMu.Lock()
	defer c.labelMu.Unlock()
	if c.labels == nil {
		known, err := c.listLabels(ctx)
		if err != nil {
			return err
		}
		c.labels = known
	}
	for _, l := range labels {
		key := strings.ToLower(l.Name)
		if c.labels[key] {
			continue
		}
		if c.dryRun {
			c.dry("POST label", "label", l.Name, "color", l.Color)
			c.labels[key] = true
			continue
		}
		color := strings.TrimPrefix(l.Color, "#")
		desc := l.Description
		_, _, err := c.gh.Issues.CreateLabel(withOp(ctx, op{kind: "POST label"}), c.owner, c.name,
			&gh.Label{Name: &l.Name, Color: &color, Description: &desc})
		if err != nil && !alreadyExists(err) {
			return c.mapErr(fmt.Sprintf("create label %q", l.Name), err)
		}
		c.labels[key] = true
	}
	return nil
}

func (c *Client) listLabels(ctx context.Context) (map[string]bool, error) {
	known := map[string]bool{}
	opts := &gh.ListOptions{PerPage: 100}
	err := paginate(func(page int) (*gh.Response, error) {
		opts.Page = page
		ls, resp, err := c.gh.Issues.ListLabels(withOp(ctx, op{kind: "GET labels"}), c.owner, c.name, opts)
		for _, l := range ls {
			known[strings.ToLower(l.GetName())] = true
		}
		return resp, err
	})
	if err != nil {
		return nil, c.mapErr("list labels", err)
	}
	return known, nil
}

// alreadyExists reports a 422 whose errors say the resource already exists.
func alreadyExists(err error) bool {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	for _, e := range er.Errors {
		if e.Code == "already_exists" {
			return true
		}
	}
	return false
}
