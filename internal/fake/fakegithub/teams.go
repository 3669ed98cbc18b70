package fakegithub

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Organization teams and team membership, as GitHub answers them:
//
//	GET /orgs/{org}/teams/{team_slug}
//	GET /orgs/{org}/teams/{team_slug}/memberships/{username}
//
// A membership is 200 {url, role, state} with state active or pending
// (invited, not accepted); someone not in the team is 404. A secret team
// is visible only to a token whose account is one of its active members:
// for any other it does not exist (404, team and memberships alike). An
// organization whose App installation lacks the "Members: read"
// permission (DenyMembersRead) answers 403 "Resource not accessible by
// integration", and so does every request with a workflow's GITHUB_TOKEN
// (the GitHub Actions App is given no organization permissions).

const teamsDoc = "https://docs.github.com/rest/teams/members#get-team-membership-for-a-user"

type team struct {
	id      int64
	org     string
	slug    string
	name    string
	secret  bool
	members map[string]*teamMember // lower login
}

type teamMember struct {
	login string
	role  string // member | maintainer
	state string // active | pending
}

// teamState holds the organizations' teams and the files each pull
// request changes (codeowners.go), the facts an approver policy reads
// (guarded by Server.mu).
type teamState struct {
	teams map[string]*team // lower "org/slug"
	// denied: organizations whose teams the token may not read.
	denied map[string]bool
	// files: lower "owner/repo#n" → the pull request's changed files.
	files map[string][]PullFile
	// commits: lower "owner/repo@sha" → who authored and committed it.
	commits map[string]commitInfo
}

func (s *Server) teamsLocked() *teamState {
	if s.teams == nil {
		s.teams = &teamState{teams: map[string]*team{}, denied: map[string]bool{}, files: map[string][]PullFile{}}
	}
	return s.teams
}

// AddTeam creates team slug in org; a secret team is visible only to its
// members' tokens. Its name is the slug.
func (s *Server) AddTeam(org, slug string, secret bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if org == "" || slug == "" || strings.ContainsAny(org+slug, "/ ") {
		return fmt.Errorf("fakegithub: team %q/%q: want an organization and a slug", org, slug)
	}
	ts := s.teamsLocked()
	key := strings.ToLower(org + "/" + slug)
	if ts.teams[key] != nil {
		return fmt.Errorf("fakegithub: team %s/%s exists", org, slug)
	}
	s.user(org, "Organization")
	ts.teams[key] = &team{id: s.newID(), org: org, slug: slug, name: slug, secret: secret, members: map[string]*teamMember{}}
	return nil
}

// SetTeamMember sets login's membership of org/slug: state "active",
// "pending" (invited) or "" (removed); role "member" or "maintainer".
func (s *Server) SetTeamMember(org, slug, login, state, role string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.teamsLocked().teams[strings.ToLower(org+"/"+slug)]
	if t == nil {
		return fmt.Errorf("fakegithub: unknown team %s/%s (call AddTeam)", org, slug)
	}
	switch {
	case state == "":
		delete(t.members, strings.ToLower(login))
		return nil
	case state != "active" && state != "pending":
		return fmt.Errorf("fakegithub: membership state %q: want active, pending or empty", state)
	case role == "":
		role = "member"
	case role != "member" && role != "maintainer":
		return fmt.Errorf("fakegithub: team role %q: want member or maintainer", role)
	}
	s.user(login, "")
	t.members[strings.ToLower(login)] = &teamMember{login: login, role: role, state: state}
	return nil
}

// DenyMembersRead makes org's teams unreadable: the App installation has
// no "Members: read" permission there (403).
func (s *Server) DenyMembersRead(org string, deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.teamsLocked().denied[strings.ToLower(org)] = deny
}

// TeamMembers lists the logins of org/slug with their state, sorted.
func (s *Server) TeamMembers(org, slug string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.teamsLocked().teams[strings.ToLower(org+"/"+slug)]
	if t == nil {
		return nil
	}
	var out []string
	for _, m := range t.members {
		out = append(out, m.login+":"+m.state)
	}
	sort.Strings(out)
	return out
}

// visibleTeam finds the team a request names, as the token sees it: nil
// with the reply to send when it may not (403) or cannot (404).
func (s *Server) visibleTeam(c *call) (*team, reply) {
	ts := s.teamsLocked()
	org := c.params["org"]
	if ts.denied[strings.ToLower(org)] || c.tok != nil && c.tok.id.AppID == ActionsAppID {
		return nil, errorReply(http.StatusForbidden, "Resource not accessible by integration", teamsDoc)
	}
	t := ts.teams[strings.ToLower(org+"/"+c.params["team_slug"])]
	if t == nil {
		return nil, errorReply(http.StatusNotFound, "Not Found", teamsDoc)
	}
	if t.secret {
		m := t.members[strings.ToLower(c.who.login)]
		if m == nil || m.state != "active" {
			return nil, errorReply(http.StatusNotFound, "Not Found", teamsDoc)
		}
	}
	return t, reply{}
}

// getTeam serves GET /orgs/{org}/teams/{team_slug}.
func (s *Server) getTeam(c *call) reply {
	t, rep := s.visibleTeam(c)
	if t == nil {
		return rep
	}
	privacy := "closed"
	if t.secret {
		privacy = "secret"
	}
	base := s.api("/organizations/%d/team/%d", s.user(t.org, "Organization").id, t.id)
	return ok(obj{
		"id": t.id, "node_id": fmt.Sprintf("T_%d", t.id), "url": base, "html_url": fmt.Sprintf("%s/orgs/%s/teams/%s", s.webURL, t.org, t.slug),
		"name": t.name, "slug": t.slug, "description": nil, "privacy": privacy, "notification_setting": "notifications_enabled",
		"permission": "pull", "members_url": base + "/members{/member}", "repositories_url": base + "/repos", "parent": nil,
	})
}

// getTeamMembership serves GET /orgs/{org}/teams/{team_slug}/memberships/{username}.
func (s *Server) getTeamMembership(c *call) reply {
	t, rep := s.visibleTeam(c)
	if t == nil {
		return rep
	}
	m := t.members[strings.ToLower(c.params["username"])]
	if m == nil {
		return errorReply(http.StatusNotFound, "Not Found", teamsDoc)
	}
	url := s.api("/organizations/%d/team/%d/memberships/%s", s.user(t.org, "Organization").id, t.id, m.login)
	return ok(obj{"url": url, "role": m.role, "state": m.state})
}
