package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// The thread read through GraphQL (forge.RecentReader). The REST comments
// API lists oldest first, so finding the state comment of a long thread
// and what is new costs a request per page of history; GraphQL orders an
// issue's comments by UPDATED_AT, and every state write edits the state
// comment, so the newest page holds it and every comment new since.

// recentPage is how many comments one GraphQL request reads (GitHub's
// limit is 100; REST's pages are 100 too, so a long catch-up costs no more).
const recentPage = 100

// recentQuery is the one GraphQL document the client sends. Facts it
// honours: databaseId is a 32-bit Int that comment ids outgrew
// (fullDatabaseId is a BigInt, sent as a string); a GitHub App's account
// is named without the "[bot]" REST appends; a deleted account is null.
// GraphQL does not report performed_via_github_app (see toComment).
const recentQuery = `query AutopilotRecentComments($owner: String!, $name: String!, $number: Int!, $last: Int!, $before: String) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      comments(last: $last, before: $before, orderBy: {field: UPDATED_AT, direction: ASC}) {
        pageInfo { hasPreviousPage startCursor }
        nodes {
          fullDatabaseId
          author { __typename login }
          body
          createdAt
          updatedAt
          url
          reactionGroups { content reactors { totalCount } }
        }
      }
    }
  }
}`

// gqlComment is one node of recentQuery.
type gqlComment struct {
	FullDatabaseID string `json:"fullDatabaseId"`
	Author         *struct {
		Typename string `json:"__typename"`
		Login    string `json:"login"`
	} `json:"author"`
	Body           string    `json:"body"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
	URL            string    `json:"url"`
	ReactionGroups []struct {
		Content  string `json:"content"`
		Reactors struct {
			TotalCount int `json:"totalCount"`
		} `json:"reactors"`
	} `json:"reactionGroups"`
}

type gqlError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type gqlRecentAnswer struct {
	Data *struct {
		Repository *struct {
			Issue *struct {
				Comments struct {
					PageInfo struct {
						HasPreviousPage bool   `json:"hasPreviousPage"`
						StartCursor     string `json:"startCursor"`
					} `json:"pageInfo"`
					Nodes []gqlComment `json:"nodes"`
				} `json:"comments"`
			} `json:"issue"`
		} `json:"repository"`
	} `json:"data"`
	Errors []gqlError `json:"errors"`
}

// gqlReactions maps GraphQL's ReactionContent to the REST names.
var gqlReactions = map[string]string{
	"THUMBS_UP": "+1", "THUMBS_DOWN": "-1", "LAUGH": "laugh", "HOORAY": "hooray",
	"CONFUSED": "confused", "HEART": "heart", "ROCKET": "rocket", "EYES": "eyes",
}

// graphqlURL is the GraphQL endpoint beside a REST root: api.github.com's
// /graphql, GHES's /api/graphql beside /api/v3/.
func graphqlURL(rest string) string {
	if p, ok := strings.CutSuffix(rest, "/api/v3/"); ok {
		return p + "/api/graphql"
	}
	return rest + "graphql"
}

// ListCommentsRecent implements forge.RecentReader. Each page is one
// POST to the GraphQL endpoint through the same transport as REST (the
// same token, retries and rate-limit windows); it is a read, so neither
// paced as a mutation nor held back by dry-run.
func (c *Client) ListCommentsRecent(ctx context.Context, number int, more func([]forge.Comment) bool) ([]forge.Comment, bool, error) {
	what := fmt.Sprintf("read recent comments of #%d (GraphQL)", number)
	var out []forge.Comment
	before := ""
	for range maxPages {
		vars := map[string]any{"owner": c.owner, "name": c.name, "number": number, "last": recentPage}
		if before != "" {
			vars["before"] = before
		}
		var ans gqlRecentAnswer
		_, err := c.do(ctx, op{kind: "POST graphql", read: true}, http.MethodPost, c.gqlURL,
			map[string]any{"query": recentQuery, "operationName": "AutopilotRecentComments", "variables": vars}, &ans, "")
		if err != nil {
			return nil, false, c.mapErr(what, err)
		}
		if err := gqlFailure(ans.Errors); err != nil {
			return nil, false, fmt.Errorf("github %s: %w", what, err)
		}
		if ans.Data == nil || ans.Data.Repository == nil || ans.Data.Repository.Issue == nil {
			return nil, false, fmt.Errorf("github %s: %w: no issue in the answer", what, forge.ErrNotFound)
		}
		conn := ans.Data.Repository.Issue.Comments
		page := make([]forge.Comment, 0, len(conn.Nodes))
		for _, n := range conn.Nodes {
			cm, err := c.gqlToComment(n, number)
			if err != nil {
				return nil, false, fmt.Errorf("github %s: %w", what, err)
			}
			page = append(page, cm)
		}
		out = append(out, page...)
		if !conn.PageInfo.HasPreviousPage || conn.PageInfo.StartCursor == "" {
			return out, true, nil
		}
		if !more(page) {
			return out, false, nil
		}
		before = conn.PageInfo.StartCursor
	}
	return nil, false, fmt.Errorf("github %s: more than %d pages, stopping", what, maxPages)
}

// gqlFailure turns a GraphQL errors array (sent with HTTP 200) into an
// error: a spent GraphQL budget is a *forge.RateLimitError (GraphQL has a
// budget of its own, so REST may still answer), a missing issue or
// repository forge.ErrNotFound.
func gqlFailure(errs []gqlError) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, e.Message)
	}
	msg := strings.Join(msgs, "; ")
	switch errs[0].Type {
	case "RATE_LIMITED":
		return &forge.RateLimitError{Msg: "GraphQL: " + msg}
	case "NOT_FOUND":
		return fmt.Errorf("%w: %s", forge.ErrNotFound, msg)
	}
	return fmt.Errorf("GraphQL: %s", msg)
}

// gqlToComment converts a node. The App is not reported by GraphQL: a
// comment by this client's own App account (Bot, login = BotLogin) is
// taken as made through this client's App, as only that App can post as
// its "<slug>[bot]"; every other comment carries AppID 0.
func (c *Client) gqlToComment(n gqlComment, issue int) (forge.Comment, error) {
	id, err := strconv.ParseInt(n.FullDatabaseID, 10, 64)
	if err != nil || id <= 0 {
		return forge.Comment{}, fmt.Errorf("comment id %q: not a database id", n.FullDatabaseID)
	}
	author := forge.User{Login: "ghost", Type: "User"} // REST's name for a deleted account
	if a := n.Author; a != nil {
		author = forge.User{Login: a.Login, Type: a.Typename}
		if a.Typename == "Bot" && !strings.HasSuffix(a.Login, "[bot]") {
			author.Login += "[bot]"
		}
	}
	out := forge.Comment{ID: id, IssueNumber: issue, Author: author, Body: n.Body,
		CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt, URL: n.URL, Reactions: map[string]int{}}
	if c.appID != 0 && author.IsBot() && c.botLogin != "" && strings.EqualFold(author.Login, c.botLogin) {
		out.AppID = c.appID
	}
	for _, g := range n.ReactionGroups {
		if k, ok := gqlReactions[g.Content]; ok && g.Reactors.TotalCount > 0 {
			out.Reactions[k] = g.Reactors.TotalCount
		}
	}
	return out, nil
}

// Requests implements forge.RecentReader: every request sent, 304s and
// retries included.
func (c *Client) Requests() int64 {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	return int64(c.t.stats.Total)
}

var _ forge.RecentReader = (*Client)(nil)
