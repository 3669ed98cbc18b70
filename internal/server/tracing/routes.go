package tracing

import (
	"strings"
)

// API names the service a client span calls.
type API string

// The APIs autopilot calls.
const (
	GitHub API = "github"
	Jira   API = "jira"
)

// RouteOther is the route of a request no template matches: the span
// keeps the method and the API, never the raw path (ids and names in it
// would make every span name unique).
const RouteOther = "other"

// route is one template: "{name}" is one path segment, "{name...}" (last)
// the rest of the path (shown as "{name}", as GitHub's reference writes it).
type route struct {
	template string
	segs     []string
}

// githubRoutes are the REST endpoints autopilot calls, as GitHub's REST
// reference names their parameters; the first match wins, so literal
// segments come before a parameter where two templates overlap.
var githubRoutes = []string{
	"/graphql",
	"/user",
	"/app",
	"/app/installations",
	"/app/installations/{installation_id}/access_tokens",
	"/app/hook/deliveries",
	"/app/hook/deliveries/{delivery_id}/attempts",
	"/installation/repositories",
	"/repositories/{repository_id}/issues/{issue_number}",
	"/orgs/{org}/teams/{team_slug}",
	"/orgs/{org}/teams/{team_slug}/memberships/{username}",
	"/repos/{owner}/{repo}",
	"/repos/{owner}/{repo}/installation",
	"/repos/{owner}/{repo}/issues",
	"/repos/{owner}/{repo}/issues/comments/{comment_id}",
	"/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
	"/repos/{owner}/{repo}/issues/{issue_number}",
	"/repos/{owner}/{repo}/issues/{issue_number}/comments",
	"/repos/{owner}/{repo}/issues/{issue_number}/labels",
	"/repos/{owner}/{repo}/issues/{issue_number}/labels/{name...}",
	"/repos/{owner}/{repo}/issues/{issue_number}/sub_issues",
	"/repos/{owner}/{repo}/issues/{issue_number}/parent",
	"/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
	"/repos/{owner}/{repo}/labels",
	"/repos/{owner}/{repo}/labels/{name...}",
	"/repos/{owner}/{repo}/collaborators/{username}/permission",
	"/repos/{owner}/{repo}/pulls/{pull_number}",
	"/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
	"/repos/{owner}/{repo}/pulls/{pull_number}/files",
	"/repos/{owner}/{repo}/commits/{ref}",
	"/repos/{owner}/{repo}/commits/{ref}/check-runs",
	"/repos/{owner}/{repo}/commits/{ref}/status",
	"/repos/{owner}/{repo}/check-runs",
	"/repos/{owner}/{repo}/check-runs/{check_run_id}",
	"/repos/{owner}/{repo}/contents",
	"/repos/{owner}/{repo}/contents/{path...}",
	"/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches",
	"/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
	"/repos/{owner}/{repo}/actions/runs/{run_id}",
	"/repos/{owner}/{repo}/actions/runs/{run_id}/approvals",
	"/repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule",
	"/repos/{owner}/{repo}/environments/{environment_name}/deployment_protection_rules",
}

// jiraRoutes are the Jira REST endpoints the go-jira adapter calls, from
// the API's version segment on.
var jiraRoutes = []string{
	"/rest/api/{v}/serverInfo",
	"/rest/api/{v}/myself",
	"/rest/api/{v}/search",
	"/rest/api/{v}/search/jql",
	"/rest/api/{v}/issue",
	"/rest/api/{v}/issue/bulk",
	"/rest/api/{v}/issue/{issueIdOrKey}",
	"/rest/api/{v}/issue/{issueIdOrKey}/transitions",
	"/rest/api/{v}/issueLink",
}

// routeTables holds the parsed templates of each API.
var routeTables = map[API][]route{GitHub: parse(githubRoutes), Jira: parse(jiraRoutes)}

func parse(templates []string) []route {
	out := make([]route, len(templates))
	for i, t := range templates {
		out[i] = route{template: strings.ReplaceAll(t, "...}", "}"), segs: strings.Split(strings.Trim(t, "/"), "/")}
	}
	return out
}

// Route is the template of a request to api (RouteOther when none
// matches). A GitHub path loses a GHES "/api/v3" or "/api" prefix; a Jira
// path is matched from its "/rest/api/" on (a Data Center site may sit
// under a context path). Jira's version segment ({v}) is kept as sent: it
// names the API, not a record.
func Route(api API, path string) string {
	switch api {
	case GitHub:
		if p, ok := strings.CutPrefix(path, "/api/v3/"); ok {
			path = "/" + p
		} else if path == "/api/graphql" {
			path = "/graphql"
		}
	case Jira:
		i := strings.Index(path, "/rest/api/")
		if i < 0 {
			return RouteOther
		}
		path = path[i:]
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for _, r := range routeTables[api] {
		if v, ok := match(r.segs, segs); ok {
			if v != "" {
				return strings.Replace(r.template, "{v}", v, 1)
			}
			return r.template
		}
	}
	return RouteOther
}

// match matches path segments against a template's; v is the Jira API
// version segment when the template has one (only digits are accepted, so
// it carries no id).
func match(tmpl, segs []string) (v string, ok bool) {
	for i, p := range tmpl {
		if i >= len(segs) || segs[i] == "" {
			return "", false
		}
		switch {
		case p == "{v}":
			if !allDigits(segs[i]) || len(segs[i]) > 2 {
				return "", false
			}
			v = segs[i]
		case strings.HasSuffix(p, "...}"):
			return v, true
		case strings.HasPrefix(p, "{"):
		case p != segs[i]:
			return "", false
		}
	}
	return v, len(tmpl) == len(segs)
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
