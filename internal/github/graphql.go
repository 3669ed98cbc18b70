package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/gql"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// The thread read through GraphQL (forge.RecentReader). The REST comments
// API lists oldest first, so finding the state comment of a long thread
// and what is new costs a request per page of history; GraphQL orders an
// issue's comments by UPDATED_AT, and every state write edits the state
// comment, so the newest page holds it and every comment new since.

// ReadRecent implements forge.RecentReader. Each page is one POST to the
// GraphQL endpoint through the same transport as REST (the same token,
// retries and rate-limit windows); it is a read, so neither paced as a
// mutation nor held back by dry-run. The issue comes with every page (a
// few fields; later pages are rare).
func (c *Client) ReadRecent(ctx context.Context, number int, more func(forge.Issue, []forge.Comment) bool) (forge.Recent, error) {
	what := fmt.Sprintf("read #%d and its recent comments (GraphQL)", number)
	var out forge.Recent
	before := ""
	for range maxPages {
		vars := map[string]any{"owner": c.owner, "name": c.name, "number": number, "last": gql.RecentPage}
		if before != "" {
			vars["before"] = before
		}
		var ans gql.RecentAnswer
		_, err := c.do(ctx, transport.Op{Kind: "POST graphql", Read: true}, http.MethodPost, c.gqlURL,
			map[string]any{"query": gql.RecentQuery, "operationName": "AutopilotRecentComments", "variables": vars}, &ans, "")
		if err != nil {
			return forge.Recent{}, c.mapErr(what, err)
		}
		if err := gql.Failure(ans.Errors); err != nil {
			return forge.Recent{}, fmt.Errorf("github %s: %w", what, err)
		}
		if ans.Data == nil || ans.Data.Repository == nil || ans.Data.Repository.Issue == nil {
			return forge.Recent{}, fmt.Errorf("github %s: %w: no issue in the answer", what, forge.ErrNotFound)
		}
		gi := ans.Data.Repository.Issue
		out.Issue = forge.Issue{Number: gi.Number, Title: gi.Title, Body: gi.Body, State: strings.ToLower(gi.State),
			Author: gi.Author.User(), URL: gi.URL, CreatedAt: gi.CreatedAt, Labels: []string{}}
		for _, l := range gi.Labels.Nodes {
			out.Issue.Labels = append(out.Issue.Labels, l.Name)
		}
		conn := gi.Comments
		page := make([]forge.Comment, 0, len(conn.Nodes))
		for _, n := range conn.Nodes {
			cm, err := n.ToForge(number, c.appID, c.botLogin)
			if err != nil {
				return forge.Recent{}, fmt.Errorf("github %s: %w", what, err)
			}
			page = append(page, cm)
		}
		out.Comments = append(out.Comments, page...)
		if !conn.PageInfo.HasPreviousPage || conn.PageInfo.StartCursor == "" {
			out.All = true
			return out, nil
		}
		if !more(out.Issue, page) {
			return out, nil
		}
		before = conn.PageInfo.StartCursor
	}
	return forge.Recent{}, fmt.Errorf("github %s: more than %d pages, stopping", what, maxPages)
}

// PinIssue pins the issue with GraphQL id nodeID above the repository's
// issue list (the pinIssue mutation; GitHub has no REST endpoint for it).
// A mutation: paced, held back by dry-run. A refusal (the repository's 3
// pins taken, no write access) is returned as GitHub worded it.
func (c *Client) PinIssue(ctx context.Context, nodeID string) error {
	ctx = budget.WithClass(ctx, budget.Background)
	if c.dryRun {
		c.dry("POST graphql pinIssue", "issue", nodeID)
		return nil
	}
	const what = "pin the issue (GraphQL pinIssue)"
	var ans gql.PinAnswer
	_, err := c.do(ctx, transport.Op{Kind: "POST graphql pinIssue", NoWait: true}, http.MethodPost, c.gqlURL,
		map[string]any{"query": gql.PinMutation, "operationName": "AutopilotPinIssue", "variables": map[string]any{"issueId": nodeID}}, &ans, "")
	if err != nil {
		return c.mapErr(what, err)
	}
	if err := gql.Failure(ans.Errors); err != nil {
		return fmt.Errorf("github %s: %w", what, err)
	}
	if ans.Data == nil || ans.Data.PinIssue == nil || ans.Data.PinIssue.Issue == nil || !ans.Data.PinIssue.Issue.IsPinned {
		return fmt.Errorf("github %s: the answer does not say the issue is pinned", what)
	}
	return nil
}

// Requests implements forge.RecentReader: every request sent, 304s and
// retries included.
func (c *Client) Requests() int64 {
	return int64(c.t.Total())
}

var _ forge.RecentReader = (*Client)(nil)
