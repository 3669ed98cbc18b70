package fakegithub

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// JSON shapes, following GitHub's OpenAPI description (components/schemas)
// and the octokit fixtures: the fields clients read, with GitHub's names,
// nulls and URL forms. Called with s.mu held.

type obj = map[string]any

func (s *Server) api(format string, a ...any) string { return s.ts.URL + fmt.Sprintf(format, a...) }

func nodeID(kind string, id int64) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%03d:%s%d", len(kind), kind, id))
}

// stamp renders a timestamp the way GitHub does; zero is null.
func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Server) userJSON(u *user) obj {
	html := s.webURL + "/" + u.login
	if u.appID != 0 {
		html = s.webURL + "/apps/" + strings.TrimSuffix(u.login, "[bot]")
	}
	return obj{
		"login": u.login, "id": u.id, "node_id": nodeID(u.typ, u.id),
		"avatar_url":  fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", u.id),
		"gravatar_id": "", "url": s.api("/users/%s", url.PathEscape(u.login)), "html_url": html,
		"type": u.typ, "site_admin": false, "user_view_type": "public",
	}
}

func (s *Server) labelJSON(rp *repository, l *label) obj {
	return obj{
		"id": l.id, "node_id": nodeID("Label", l.id), "name": l.name, "color": l.color,
		"url":         s.api("/repos/%s/labels/%s", rp.fullName(), url.PathEscape(l.name)),
		"description": orNull(l.description), "default": l.isDefault,
	}
}

func (s *Server) labelsJSON(rp *repository, ls []*label) []obj {
	out := make([]obj, 0, len(ls))
	for _, l := range ls {
		out = append(out, s.labelJSON(rp, l))
	}
	return out
}

// association is author_association: an explicit override, OWNER for the
// repository owner, COLLABORATOR for anyone given a permission, else NONE.
func association(rp *repository, u *user) string {
	if a := rp.assoc[strings.ToLower(u.login)]; a != "" {
		return a
	}
	if strings.EqualFold(u.login, rp.owner) {
		return "OWNER"
	}
	if p, ok := rp.perms[strings.ToLower(u.login)]; ok && p != access.None {
		return "COLLABORATOR"
	}
	return "NONE"
}

func (s *Server) issueHTML(rp *repository, is *issue) string {
	kind := "issues"
	if is.pull != nil {
		kind = "pull"
	}
	return fmt.Sprintf("%s/%s/%s/%d", s.webURL, rp.fullName(), kind, is.number)
}

func (s *Server) issueJSON(rp *repository, is *issue) obj {
	base := s.api("/repos/%s/issues/%d", rp.fullName(), is.number)
	live := 0
	for _, c := range is.comments {
		if !c.deleted {
			live++
		}
	}
	o := obj{
		"id": is.id, "node_id": nodeID("Issue", is.id), "number": is.number,
		"url": base, "repository_url": s.api("/repos/%s", rp.fullName()),
		"labels_url": base + "/labels{/name}", "comments_url": base + "/comments",
		"events_url": base + "/events", "html_url": s.issueHTML(rp, is),
		"title": is.title, "body": orNull(is.body), "state": is.state, "locked": false,
		"user": s.userJSON(is.user), "labels": s.labelsJSON(rp, is.labels),
		"assignee": nil, "assignees": []obj{}, "milestone": nil, "comments": live,
		"created_at": stamp(is.created), "updated_at": stamp(is.updated), "closed_at": stamp(is.closed),
		"author_association": association(rp, is.user),
	}
	var via any
	if a := s.apps[is.appID]; is.appID != 0 && a != nil {
		via = s.appJSON(a)
	}
	o["performed_via_github_app"] = via
	if is.pull != nil {
		pu := s.api("/repos/%s/pulls/%d", rp.fullName(), is.number)
		html := s.issueHTML(rp, is)
		o["pull_request"] = obj{"url": pu, "html_url": html, "diff_url": html + ".diff",
			"patch_url": html + ".patch", "merged_at": stamp(is.pull.mergedAt)}
	}
	return o
}

func (s *Server) commentJSON(c *comment) obj {
	rp := c.repo
	is := rp.issues[c.issue]
	counts := obj{"url": s.api("/repos/%s/issues/comments/%d/reactions", rp.fullName(), c.id)}
	for _, k := range reactionContents {
		counts[k] = 0
	}
	for _, r := range c.reactions {
		counts[r.content] = counts[r.content].(int) + 1
	}
	counts["total_count"] = len(c.reactions)
	var via any
	if c.appID != 0 {
		if a := s.apps[c.appID]; a != nil {
			via = s.appJSON(a)
		}
	}
	return obj{
		"id": c.id, "node_id": nodeID("IssueComment", c.id),
		"url":      s.api("/repos/%s/issues/comments/%d", rp.fullName(), c.id),
		"html_url": fmt.Sprintf("%s#issuecomment-%d", s.issueHTML(rp, is), c.id),
		"body":     c.body, "user": s.userJSON(c.user),
		"created_at": stamp(c.created), "updated_at": stamp(c.updated),
		"issue_url":                s.api("/repos/%s/issues/%d", rp.fullName(), c.issue),
		"author_association":       association(rp, c.user),
		"performed_via_github_app": via, "reactions": counts,
	}
}

func (s *Server) reactionJSON(r *reaction) obj {
	return obj{"id": r.id, "node_id": nodeID("Reaction", r.id), "user": s.userJSON(r.user),
		"content": r.content, "created_at": stamp(r.created)}
}

func (s *Server) appJSON(a *app) obj {
	owner := "github"
	if len(a.installations) > 0 && a.id != ActionsAppID {
		owner = a.installations[0].account
	}
	return obj{
		"id": a.id, "slug": a.slug, "node_id": nodeID("Integration", a.id),
		"client_id": fmt.Sprintf("Iv1.%016x", a.id), "owner": s.userJSON(s.user(owner, "Organization")),
		"name": a.name, "description": "", "external_url": s.webURL + "/apps/" + a.slug,
		"html_url": s.webURL + "/apps/" + a.slug, "created_at": stamp(a.created), "updated_at": stamp(a.created),
		"permissions": obj{"issues": "write", "pull_requests": "write", "contents": "read",
			"metadata": "read", "actions": "write", "checks": "read"},
		"events": []string{"issues", "issue_comment", "pull_request"},
	}
}

func (s *Server) repoJSON(rp *repository) obj {
	owner := s.user(rp.owner, "Organization")
	visibility := "public"
	if rp.private {
		visibility = "private"
	}
	return obj{
		"id": rp.id, "node_id": nodeID("Repository", rp.id), "name": rp.name,
		"full_name": rp.fullName(), "owner": s.userJSON(owner), "private": rp.private,
		"visibility": visibility, "html_url": s.webURL + "/" + rp.fullName(),
		"url": s.api("/repos/%s", rp.fullName()), "default_branch": rp.defaultBranch,
		"fork": rp.fork, "archived": false, "disabled": false, "has_issues": true,
	}
}
