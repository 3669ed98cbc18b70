package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
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
      number
      title
      body
      state
      url
      createdAt
      author { __typename login }
      labels(first: 100) { nodes { name } }
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
	FullDatabaseID string    `json:"fullDatabaseId"`
	Author         *gqlActor `json:"author"`
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

type gqlActor struct {
	Typename string `json:"__typename"`
	Login    string `json:"login"`
}

// user converts an author: a GitHub App's account gets REST's "[bot]"
// suffix back, a deleted one (null) is REST's "ghost".
func (a *gqlActor) user() forge.User {
	if a == nil {
		return forge.User{Login: "ghost", Type: "User"}
	}
	u := forge.User{Login: a.Login, Type: a.Typename}
	if a.Typename == "Bot" && !strings.HasSuffix(a.Login, "[bot]") {
		u.Login += "[bot]"
	}
	return u
}

type gqlError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type gqlRecentAnswer struct {
	Data *struct {
		Repository *struct {
			Issue *struct {
				Number    int       `json:"number"`
				Title     string    `json:"title"`
				Body      string    `json:"body"`
				State     string    `json:"state"`
				URL       string    `json:"url"`
				CreatedAt time.Time `json:"createdAt"`
				Author    *gqlActor `json:"author"`
				Labels    struct {
					Nodes []struct {
						Name string `json:"name"`
					} `json:"nodes"`
				} `json:"labels"`
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
		vars := map[string]any{"owner": c.owner, "name": c.name, "number": number, "last": recentPage}
		if before != "" {
			vars["before"] = before
		}
		var ans gqlRecentAnswer
		_, err := c.do(ctx, transport.Op{Kind: "POST graphql", Read: true}, http.MethodPost, c.gqlURL,
			map[string]any{"query": recentQuery, "operationName": "AutopilotRecentComments", "variables": vars}, &ans, "")
		if err != nil {
			return forge.Recent{}, c.mapErr(what, err)
		}
		if err := gqlFailure(ans.Errors); err != nil {
			return forge.Recent{}, fmt.Errorf("github %s: %w", what, err)
		}
		if ans.Data == nil || ans.Data.Repository == nil || ans.Data.Repository.Issue == nil {
			return forge.Recent{}, fmt.Errorf("github %s: %w: no issue in the answer", what, forge.ErrNotFound)
		}
		gi := ans.Data.Repository.Issue
		out.Issue = forge.Issue{Number: gi.Number, Title: gi.Title, Body: gi.Body, State: strings.ToLower(gi.State),
			Author: gi.Author.user(), URL: gi.URL, CreatedAt: gi.CreatedAt, Labels: []string{}}
		for _, l := range gi.Labels.Nodes {
			out.Issue.Labels = append(out.Issue.Labels, l.Name)
		}
		conn := gi.Comments
		page := make([]forge.Comment, 0, len(conn.Nodes))
		for _, n := range conn.Nodes {
			cm, err := c.gqlToComment(n, number)
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
	author := n.Author.user()
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
	return int64(c.t.Total())
}

var _ forge.RecentReader = (*Client)(nil)
