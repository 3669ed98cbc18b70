package tracing

import (
	"regexp"
	"slices"
	"testing"
)

// jiraVersion is the version segment Route keeps in a Jira route.
var jiraVersion = regexp.MustCompile(`^/rest/api/[0-9]{1,2}/`)

// TestRouteTemplateNamesNoId: a request's route is GitHub's or Jira's
// template for it, with owners, repositories, numbers, logins, refs,
// paths and issue keys replaced by their parameter names, whatever base
// path the API sits under (GHES's /api/v3, a Jira context path).
func TestRouteTemplateNamesNoId(t *testing.T) {
	tests := []struct {
		api          API
		method, path string
		want         string
	}{
		{GitHub, "GET", "/repos/octo/repo/issues/12", "/repos/{owner}/{repo}/issues/{issue_number}"},
		{GitHub, "GET", "/repos/octo/repo/issues/12/comments", "/repos/{owner}/{repo}/issues/{issue_number}/comments"},
		{GitHub, "GET", "/repos/octo/repo/issues/comments/99", "/repos/{owner}/{repo}/issues/comments/{comment_id}"},
		{GitHub, "PATCH", "/repos/octo/repo/issues/comments/99", "/repos/{owner}/{repo}/issues/comments/{comment_id}"},
		{GitHub, "POST", "/repos/octo/repo/issues/comments/99/reactions", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"},
		{GitHub, "DELETE", "/repos/octo/repo/issues/3/labels/autopilot:waiting", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"},
		{GitHub, "GET", "/repos/octo/repo/labels/a%2Fb", "/repos/{owner}/{repo}/labels/{name}"},
		{GitHub, "GET", "/repos/octo/repo/collaborators/alice/permission", "/repos/{owner}/{repo}/collaborators/{username}/permission"},
		{GitHub, "GET", "/repos/octo/repo/contents/docs/a/b.md", "/repos/{owner}/{repo}/contents/{path}"},
		{GitHub, "GET", "/repos/octo/repo/contents", "/repos/{owner}/{repo}/contents"},
		{GitHub, "GET", "/repos/octo/repo/commits/abc123/check-runs", "/repos/{owner}/{repo}/commits/{ref}/check-runs"},
		{GitHub, "POST", "/repos/octo/repo/actions/workflows/ci.yml/dispatches", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"},
		{GitHub, "GET", "/repos/octo/repo", "/repos/{owner}/{repo}"},
		{GitHub, "GET", "/repos/octo/repo/", "/repos/{owner}/{repo}"},
		{GitHub, "POST", "/graphql", "/graphql"},
		{GitHub, "POST", "/api/graphql", "/graphql"},
		{GitHub, "GET", "/api/v3/repos/octo/repo/pulls/7/reviews", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"},
		{GitHub, "POST", "/app/installations/42/access_tokens", "/app/installations/{installation_id}/access_tokens"},
		{GitHub, "GET", "/orgs/acme/teams/core/memberships/bob", "/orgs/{org}/teams/{team_slug}/memberships/{username}"},
		{GitHub, "GET", "/repos/octo/repo/issues/5/sub_issues", "/repos/{owner}/{repo}/issues/{issue_number}/sub_issues"},
		{GitHub, "GET", "/repos/octo/repo/secret-scanning/alerts/1", RouteOther},
		{GitHub, "GET", "/users/alice/12", RouteOther},
		{GitHub, "GET", "", RouteOther},
		{Jira, "GET", "/rest/api/2/issue/PROJ-12", "/rest/api/2/issue/{issueIdOrKey}"},
		{Jira, "GET", "/jira/rest/api/2/issue/PROJ-12/transitions", "/rest/api/2/issue/{issueIdOrKey}/transitions"},
		{Jira, "POST", "/rest/api/2/issue/bulk", "/rest/api/2/issue/bulk"},
		{Jira, "POST", "/rest/api/2/issue", "/rest/api/2/issue"},
		{Jira, "GET", "/rest/api/2/search/jql", "/rest/api/2/search/jql"},
		{Jira, "GET", "/rest/api/3/search/jql", "/rest/api/3/search/jql"},
		{Jira, "GET", "/rest/api/2/myself", "/rest/api/2/myself"},
		{Jira, "GET", "/rest/api/2/serverInfo", "/rest/api/2/serverInfo"},
		{Jira, "GET", "/rest/api/2/user/PROJ-1", RouteOther},
		{Jira, "GET", "/repos/octo/repo", RouteOther},
	}
	for _, tt := range tests {
		if got := Route(tt.api, tt.path); got != tt.want {
			t.Errorf("Route(%s, %s %s) = %q, want %q", tt.api, tt.method, tt.path, got, tt.want)
		}
	}
}

// FuzzRoute: whatever the path, the route is one of the table's templates
// or RouteOther, so a span's route never carries an id from the request.
func FuzzRoute(f *testing.F) {
	for _, s := range []string{"/repos/a/b/issues/1", "/api/v3/repos/a/b", "/rest/api/2/issue/X-1/transitions",
		"//", "/repos/{owner}/{repo}", "/graphql", "/jira/rest/api/3/search/jql", "/repos/a/b/contents/x/../../y"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
	}
	templates := map[API][]string{}
	for api, rs := range routeTables {
		for _, r := range rs {
			templates[api] = append(templates[api], r.template)
		}
	}
	f.Fuzz(func(t *testing.T, path string, which uint8) {
		api := GitHub
		if which%2 == 1 {
			api = Jira
		}
		got := Route(api, path)
		if got == RouteOther {
			return
		}
		if !slices.Contains(templates[api], jiraVersion.ReplaceAllString(got, "/rest/api/{v}/")) {
			t.Fatalf("Route(%s, %q) = %q: not a template", api, path, got)
		}
	})
}
