package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

const testRecentQuery = `query AutopilotRecentComments($owner: String!, $name: String!, $number: Int!, $last: Int!, $before: String) {
  repository(owner: $owner, name: $name) { issue(number: $number) { number title body state url createdAt author { __typename login } labels(first: 100) { nodes { name } } comments(last: $last, before: $before, orderBy: {field: UPDATED_AT, direction: ASC}) {
    pageInfo { hasPreviousPage startCursor } nodes { fullDatabaseId author { __typename login } body createdAt updatedAt url reactionGroups { content reactors { totalCount } } } } } }
}`

func gqlBody(op, query string, vars map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": query, "operationName": op, "variables": vars})
	return string(b)
}

func TestGraphQLRecentComments(t *testing.T) {
	e := newEnv(t)
	n := e.issue("long")
	for i := range 3 {
		_, err := e.s.AddComment(testRepo, n, "alice", fmt.Sprintf("c%d", i))
		must(t, err)
	}
	bot, err := e.s.AddComment(testRepo, n, ActionsBotLogin, "state")
	must(t, err)
	for _, path := range []string{"/graphql", "/api/graphql"} {
		resp, b := e.do("POST", path, humanTok, gqlBody(RecentCommentsOp, testRecentQuery,
			map[string]any{"owner": "octo", "name": "repo", "number": n, "last": 2}), nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-RateLimit-Resource") != "graphql" {
			t.Fatalf("%s: status %d, resource %q: %s", path, resp.StatusCode, resp.Header.Get("X-RateLimit-Resource"), b)
		}
		var ans struct {
			Data struct {
				Repository struct {
					Issue struct {
						Title    string
						State    string
						Comments struct {
							PageInfo struct {
								HasPreviousPage bool
								StartCursor     string
							}
							Nodes []struct {
								FullDatabaseID string
								Author         struct {
									Typename string `json:"__typename"`
									Login    string
								}
								Body string
							}
						}
					}
				}
			}
		}
		must(t, json.Unmarshal(b, &ans))
		if is := ans.Data.Repository.Issue; is.Title != "long" || is.State != "OPEN" {
			t.Errorf("issue %q %s, want long OPEN", is.Title, is.State)
		}
		c := ans.Data.Repository.Issue.Comments
		if len(c.Nodes) != 2 || !c.PageInfo.HasPreviousPage || c.PageInfo.StartCursor == "" {
			t.Fatalf("page: %s", b)
		}
		last := c.Nodes[1]
		if last.FullDatabaseID != fmt.Sprint(bot.ID) || last.Author.Login != "github-actions" || last.Author.Typename != "Bot" {
			t.Errorf("newest node %+v: want the bot's comment, login without [bot]", last)
		}
	}
	if got := len(e.s.Requests()); got != 2 || e.s.Count("POST /graphql") != 2 {
		t.Errorf("%d requests logged, want both GraphQL reads", got)
	}
	if len(e.s.MutationTimes()) != 0 {
		t.Error("a GraphQL read counted as a mutation")
	}
	// Any other document is a GraphQL error: HTTP 200 with errors.
	resp, b := e.do("POST", "/graphql", humanTok, gqlBody("Other", "query Other { viewer { login } }", nil), nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"errors"`) {
		t.Errorf("unknown document: %d %s", resp.StatusCode, b)
	}
	resp, b = e.do("POST", "/graphql", humanTok, gqlBody(RecentCommentsOp, testRecentQuery,
		map[string]any{"owner": "octo", "name": "repo", "number": 999, "last": 2}), nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"NOT_FOUND"`) {
		t.Errorf("missing issue: %d %s", resp.StatusCode, b)
	}
}
