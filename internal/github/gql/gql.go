// Package gql is the GitHub adapter's GraphQL wire format: the query it
// sends (an issue with its most recently updated comments) and the
// pinIssue mutation, the answer's
// shape, and its conversion to forge types. It sends nothing itself
// (internal/github does, through its transport).
package gql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// RecentPage is how many comments one GraphQL request reads (GitHub's
// limit is 100; REST's pages are 100 too, so a long catch-up costs no more).
const RecentPage = 100

// RecentQuery is the one GraphQL document the client sends. Facts it
// honours: databaseId is a 32-bit Int that comment ids outgrew
// (fullDatabaseId is a BigInt, sent as a string); a GitHub App's account
// is named without the "[bot]" REST appends; a deleted account is null.
// GraphQL does not report performed_via_github_app (see Comment.ToForge).
const RecentQuery = `query AutopilotRecentComments($owner: String!, $name: String!, $number: Int!, $last: Int!, $before: String) {
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

// Comment is one comment node of RecentQuery.
type Comment struct {
	FullDatabaseID string    `json:"fullDatabaseId"`
	Author         *Actor    `json:"author"`
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

// Actor is a comment's or an issue's author.
type Actor struct {
	Typename string `json:"__typename"`
	Login    string `json:"login"`
}

// User converts an author: a GitHub App's account gets REST's "[bot]"
// suffix back, a deleted one (null) is REST's "ghost".
func (a *Actor) User() forge.User {
	if a == nil {
		return forge.User{Login: "ghost", Type: "User"}
	}
	u := forge.User{Login: a.Login, Type: a.Typename}
	if a.Typename == "Bot" && !strings.HasSuffix(a.Login, "[bot]") {
		u.Login += "[bot]"
	}
	return u
}

// PinMutation pins an issue above its repository's issue list (GraphQL
// only; no REST endpoint). GitHub lets people with write access pin and a
// repository hold at most 3 pinned issues; a refusal is an errors array
// (HTTP 200) whose wording GitHub does not document.
const PinMutation = `mutation AutopilotPinIssue($issueId: ID!) {
  pinIssue(input: {issueId: $issueId}) {
    issue { id isPinned }
  }
}`

// PinAnswer is the answer to PinMutation.
type PinAnswer struct {
	Data *struct {
		PinIssue *struct {
			Issue *struct {
				ID       string `json:"id"`
				IsPinned bool   `json:"isPinned"`
			} `json:"issue"`
		} `json:"pinIssue"`
	} `json:"data"`
	Errors []Error `json:"errors"`
}

// Error is one entry of the errors array GraphQL answers with HTTP 200.
type Error struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// RecentAnswer is the answer to RecentQuery.
type RecentAnswer struct {
	Data *struct {
		Repository *struct {
			Issue *struct {
				Number    int       `json:"number"`
				Title     string    `json:"title"`
				Body      string    `json:"body"`
				State     string    `json:"state"`
				URL       string    `json:"url"`
				CreatedAt time.Time `json:"createdAt"`
				Author    *Actor    `json:"author"`
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
					Nodes []Comment `json:"nodes"`
				} `json:"comments"`
			} `json:"issue"`
		} `json:"repository"`
	} `json:"data"`
	Errors []Error `json:"errors"`
}

// reactions maps GraphQL's ReactionContent to the REST names.
var reactions = map[string]string{
	"THUMBS_UP": "+1", "THUMBS_DOWN": "-1", "LAUGH": "laugh", "HOORAY": "hooray",
	"CONFUSED": "confused", "HEART": "heart", "ROCKET": "rocket", "EYES": "eyes",
}

// URL is the GraphQL endpoint beside a REST root: api.github.com's
// /graphql, GHES's /api/graphql beside /api/v3/.
func URL(rest string) string {
	if p, ok := strings.CutSuffix(rest, "/api/v3/"); ok {
		return p + "/api/graphql"
	}
	return rest + "graphql"
}

// Failure turns a GraphQL errors array (sent with HTTP 200) into an
// error: a spent GraphQL budget is a *forge.RateLimitError (GraphQL has a
// budget of its own, so REST may still answer), a missing issue or
// repository forge.ErrNotFound.
func Failure(errs []Error) error {
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

// ToForge converts a node of issue's thread. The App is not reported by GraphQL: a
// comment by this client's own App account (Bot, login = BotLogin) is
// taken as made through this client's App (appID, bot), as only that App can
// post as its "<slug>[bot]"; every other comment carries AppID 0.
func (n Comment) ToForge(issue int, appID int64, bot string) (forge.Comment, error) {
	id, err := strconv.ParseInt(n.FullDatabaseID, 10, 64)
	if err != nil || id <= 0 {
		return forge.Comment{}, fmt.Errorf("comment id %q: not a database id", n.FullDatabaseID)
	}
	author := n.Author.User()
	out := forge.Comment{ID: id, IssueNumber: issue, Author: author, Body: n.Body,
		CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt, URL: n.URL, Reactions: map[string]int{}}
	if appID != 0 && author.IsBot() && bot != "" && strings.EqualFold(author.Login, bot) {
		out.AppID = appID
	}
	for _, g := range n.ReactionGroups {
		if k, ok := reactions[g.Content]; ok && g.Reactors.TotalCount > 0 {
			out.Reactions[k] = g.Reactors.TotalCount
		}
	}
	return out, nil
}
