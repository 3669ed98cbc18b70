package fakegithub

import (
	"net/http"
	"strings"
)

type handlerFunc func(*Server, *call) reply

type route struct {
	method string
	segs   []string
	jwt    bool // authenticated by an App JWT instead of a token
	h      handlerFunc
}

// buildRoutes lists the served endpoints; the first match wins, so literal
// segments come before wildcards where two patterns overlap.
func buildRoutes() []route {
	const rp = "/repos/{owner}/{repo}"
	table := []struct {
		method, pattern string
		jwt             bool
		h               handlerFunc
	}{
		{"GET", "/user", false, (*Server).getAuthUser},
		{"POST", "/graphql", false, (*Server).graphql},
		{"GET", rp, false, (*Server).getRepo},
		{"GET", rp + "/issues", false, (*Server).listIssues},
		{"GET", rp + "/issues/comments/{id}", false, (*Server).getComment},
		{"PATCH", rp + "/issues/comments/{id}", false, (*Server).editComment},
		{"DELETE", rp + "/issues/comments/{id}", false, (*Server).deleteComment},
		{"POST", rp + "/issues/comments/{id}/reactions", false, (*Server).react},
		{"GET", rp + "/issues/{number}", false, (*Server).getIssue},
		{"PATCH", rp + "/issues/{number}", false, (*Server).patchIssue},
		{"GET", rp + "/issues/{number}/comments", false, (*Server).listComments},
		{"POST", rp + "/issues/{number}/comments", false, (*Server).createComment},
		{"GET", rp + "/issues/{number}/labels", false, (*Server).listIssueLabels},
		{"POST", rp + "/issues/{number}/labels", false, (*Server).addIssueLabels},
		{"PUT", rp + "/issues/{number}/labels", false, (*Server).setIssueLabels},
		{"DELETE", rp + "/issues/{number}/labels/{name...}", false, (*Server).removeIssueLabel},
		{"GET", rp + "/labels", false, (*Server).listLabels},
		{"POST", rp + "/labels", false, (*Server).createLabel},
		{"GET", rp + "/labels/{name...}", false, (*Server).getLabel},
		{"PATCH", rp + "/labels/{name...}", false, (*Server).updateLabel},
		{"GET", rp + "/collaborators/{user}/permission", false, (*Server).getPermission},
		{"GET", rp + "/pulls/{number}", false, (*Server).getPull},
		{"GET", rp + "/pulls/{number}/reviews", false, (*Server).listReviews},
		{"GET", rp + "/pulls/{number}/files", false, (*Server).listPullFiles},
		{"GET", "/orgs/{org}/teams/{team_slug}", false, (*Server).getTeam},
		{"GET", "/orgs/{org}/teams/{team_slug}/memberships/{username}", false, (*Server).getTeamMembership},
		{"POST", rp + "/pulls/{number}/reviews", false, (*Server).createReview},
		{"GET", rp + "/commits/{ref}/check-runs", false, (*Server).listCheckRuns},
		{"GET", rp + "/commits/{ref}", false, (*Server).getCommit},
		{"POST", rp + "/check-runs", false, (*Server).createCheckRun},
		{"GET", rp + "/check-runs/{id}", false, (*Server).getCheckRun},
		{"PATCH", rp + "/check-runs/{id}", false, (*Server).updateCheckRun},
		{"GET", rp + "/commits/{ref}/status", false, (*Server).combinedStatus},
		{"GET", rp + "/contents", false, (*Server).getContents}, // the root listing ("contents/")
		{"GET", rp + "/contents/{path...}", false, (*Server).getContents},
		{"POST", rp + "/actions/workflows/{workflow}/dispatches", false, (*Server).dispatch},
		{"GET", rp + "/actions/workflows/{workflow}/runs", false, (*Server).listRuns},
		{"GET", rp + "/actions/runs/{run}", false, (*Server).getRun},
		{"GET", rp + "/installation", true, (*Server).getRepoInstallation},
		{"GET", "/app", true, (*Server).getApp},
		{"GET", "/app/installations", true, (*Server).listInstallations},
		{"POST", "/app/installations/{id}/access_tokens", true, (*Server).createInstallationToken},
		{"GET", "/app/hook/deliveries", true, (*Server).listHookDeliveries},
		{"POST", "/app/hook/deliveries/{id}/attempts", true, (*Server).redeliverHook},
		{"GET", "/installation/repositories", false, (*Server).listInstallationRepos},
		{"GET", "/repositories/{id}/issues/{number}", false, (*Server).getIssueByRepoID},
	}
	routes := make([]route, len(table))
	for i, t := range table {
		routes[i] = route{method: t.method, segs: splitPath(t.pattern), jwt: t.jwt, h: t.h}
	}
	return append(append(routes, subIssueRoutes()...), deployRoutes()...)
}

// match finds the route for a request path; HEAD is served as GET.
func (s *Server) match(method string, segs []string) (*route, map[string]string) {
	if method == http.MethodHead {
		method = http.MethodGet
	}
	for i := range s.routes {
		rt := &s.routes[i]
		if rt.method != method {
			continue
		}
		if params, ok := matchSegs(rt.segs, segs); ok {
			return rt, params
		}
	}
	return nil, nil
}

// matchSegs matches path segments against a pattern where "*" or "{name}"
// is one segment and "{name...}" (last) is the rest of the path.
func matchSegs(pattern, segs []string) (map[string]string, bool) {
	params := map[string]string{}
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "...}") {
			if i >= len(segs) {
				return nil, false
			}
			params[p[1:len(p)-4]] = strings.Join(segs[i:], "/")
			return params, true
		}
		if i >= len(segs) {
			return nil, false
		}
		switch {
		case p == "*":
		case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}"):
			params[p[1:len(p)-1]] = segs[i]
		case p != segs[i]:
			return nil, false
		}
	}
	return params, len(pattern) == len(segs)
}

// matchRequest matches "METHOD /path/pattern" (method may be "*") against
// a method and path segments.
func matchRequest(method string, pattern []string, m string, segs []string) bool {
	if method != "*" && !strings.EqualFold(method, m) {
		return false
	}
	_, ok := matchSegs(pattern, segs)
	return ok
}
