package fakegithub

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"
)

// teamEnv: organization acme with a closed team sre (ada active, bob
// invited) and a secret team security (carol); alice's token reads them.
func teamEnv(t *testing.T) *env {
	e := newEnv(t)
	must(t, e.s.AddTeam("acme", "sre", false))
	must(t, e.s.AddTeam("acme", "security", true))
	must(t, e.s.SetTeamMember("acme", "sre", "ada", "active", ""))
	must(t, e.s.SetTeamMember("acme", "sre", "bob", "pending", "maintainer"))
	must(t, e.s.SetTeamMember("acme", "security", "carol", "active", ""))
	return e
}

func TestTeamMembershipShapes(t *testing.T) {
	e := teamEnv(t)
	gh := e.client(humanTok)
	ctx := context.Background()
	m, resp, err := gh.Teams.GetTeamMembershipBySlug(ctx, "acme", "sre", "ada")
	wantStatus(t, resp, err, http.StatusOK)
	if m.GetState() != "active" || m.GetRole() != "member" || !strings.Contains(m.GetURL(), "/memberships/ada") {
		t.Fatalf("ada: %+v", m)
	}
	m, resp, err = gh.Teams.GetTeamMembershipBySlug(ctx, "acme", "SRE", "Bob")
	wantStatus(t, resp, err, http.StatusOK)
	if m.GetState() != "pending" || m.GetRole() != "maintainer" {
		t.Fatalf("bob: %+v", m)
	}
	_, resp, err = gh.Teams.GetTeamMembershipBySlug(ctx, "acme", "sre", "mallory")
	wantStatus(t, resp, err, http.StatusNotFound) // not a member
	_, resp, err = gh.Teams.GetTeamMembershipBySlug(ctx, "acme", "nope", "ada")
	wantStatus(t, resp, err, http.StatusNotFound) // no such team

	team, resp, err := gh.Teams.GetTeamBySlug(ctx, "acme", "sre")
	wantStatus(t, resp, err, http.StatusOK)
	if team.GetSlug() != "sre" || team.GetPrivacy() != "closed" || team.GetID() == 0 {
		t.Fatalf("team %+v", team)
	}
}

func TestSecretTeamIsNotFoundForOthers(t *testing.T) {
	e := teamEnv(t)
	ctx := context.Background()
	_, resp, err := e.client(humanTok).Teams.GetTeamMembershipBySlug(ctx, "acme", "security", "carol")
	wantStatus(t, resp, err, http.StatusNotFound) // alice cannot see the secret team: 404, not 403
	_, resp, err = e.client(humanTok).Teams.GetTeamBySlug(ctx, "acme", "security")
	wantStatus(t, resp, err, http.StatusNotFound)

	e.s.AddToken("tok-carol", Identity{Login: "carol"})
	m, resp, err := e.client("tok-carol").Teams.GetTeamMembershipBySlug(ctx, "acme", "security", "carol")
	wantStatus(t, resp, err, http.StatusOK)
	if m.GetState() != "active" {
		t.Fatalf("carol sees %+v", m)
	}
	team, resp, err := e.client("tok-carol").Teams.GetTeamBySlug(ctx, "acme", "security")
	wantStatus(t, resp, err, http.StatusOK)
	if team.GetPrivacy() != "secret" {
		t.Fatalf("privacy %q", team.GetPrivacy())
	}
}

func TestMembersReadDeniedIs403(t *testing.T) {
	e := teamEnv(t)
	e.s.DenyMembersRead("acme", true)
	resp, body := e.do("GET", "/orgs/acme/teams/sre/memberships/ada", humanTok, "", nil)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "Resource not accessible by integration") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	e.s.DenyMembersRead("acme", false)
	if resp, _ := e.do("GET", "/orgs/acme/teams/sre/memberships/ada", humanTok, "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("after granting: %d", resp.StatusCode)
	}
}

func TestMembershipChangesAreSeenAtOnce(t *testing.T) {
	e := teamEnv(t)
	gh := e.client(humanTok)
	ctx := context.Background()
	must(t, e.s.SetTeamMember("acme", "sre", "ada", "", ""))
	_, resp, err := gh.Teams.GetTeamMembershipBySlug(ctx, "acme", "sre", "ada")
	wantStatus(t, resp, err, http.StatusNotFound)
	must(t, e.s.SetTeamMember("acme", "sre", "bob", "active", ""))
	if got := strings.Join(e.s.TeamMembers("acme", "sre"), " "); got != "bob:active" {
		t.Fatalf("members %q", got)
	}
}

func TestTeamControlErrors(t *testing.T) {
	e := teamEnv(t)
	for name, err := range map[string]error{
		"duplicate team": e.s.AddTeam("acme", "sre", false),
		"bad slug":       e.s.AddTeam("acme", "a/b", false),
		"unknown team":   e.s.SetTeamMember("acme", "nope", "ada", "active", ""),
		"bad state":      e.s.SetTeamMember("acme", "sre", "ada", "invited", ""),
		"bad role":       e.s.SetTeamMember("acme", "sre", "ada", "active", "owner"),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestPullFilesAndCodeOwnersAtTheBase(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	gh := e.client(humanTok)
	n, err := e.s.CreatePull(testRepo, "alice", "Change the API", "Fixes #1", "feature", "abc123")
	must(t, err)
	var files []PullFile
	for i := 0; i < 120; i++ {
		files = append(files, PullFile{Filename: "src/api/f" + strings.Repeat("x", i%3) + ".go", Additions: 1})
	}
	files = append(files, PullFile{Filename: "docs/new.md", Status: "renamed", PreviousFilename: "docs/old.md"})
	must(t, e.s.SetPullFiles(testRepo, n, files...))
	must(t, e.s.SetFile(testRepo, ".github/CODEOWNERS", []byte("src/api/ @acme/api\n")))

	var got []*github.CommitFile
	opt := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := gh.PullRequests.ListFiles(ctx, "octo", "repo", n, opt)
		wantStatus(t, resp, err, http.StatusOK)
		got = append(got, page...)
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	if len(got) != 121 || got[0].GetStatus() != "modified" || got[0].GetChanges() != 1 {
		t.Fatalf("%d files, first %+v", len(got), got[0])
	}
	if last := got[120]; last.GetFilename() != "docs/new.md" || last.GetPreviousFilename() != "docs/old.md" || last.GetStatus() != "renamed" {
		t.Fatalf("last %+v", last)
	}
	file, _, resp, err := gh.Repositories.GetContents(ctx, "octo", "repo", ".github/CODEOWNERS", &github.RepositoryContentGetOptions{Ref: "main"})
	wantStatus(t, resp, err, http.StatusOK)
	if c, _ := file.GetContent(); c != "src/api/ @acme/api\n" {
		t.Fatalf("CODEOWNERS %q", c)
	}
	for _, where := range []string{"CODEOWNERS", "docs/CODEOWNERS"} {
		_, _, resp, err = gh.Repositories.GetContents(ctx, "octo", "repo", where, &github.RepositoryContentGetOptions{Ref: "main"})
		wantStatus(t, resp, err, http.StatusNotFound)
	}
	_, resp, err = gh.PullRequests.ListFiles(ctx, "octo", "repo", 999, nil)
	wantStatus(t, resp, err, http.StatusNotFound)
	if err := e.s.SetPullFiles(testRepo, e.issue("plain"), PullFile{Filename: "a"}); err == nil {
		t.Fatal("files set on an issue")
	}
}

func TestCommitOfAPullHeadAndUnknown(t *testing.T) {
	e := newEnv(t)
	n, err := e.s.CreatePull(testRepo, "alice", "x", "", "x", "feedbeef")
	must(t, err)
	_ = n
	gh := e.client(humanTok)
	ctx := context.Background()
	rc, resp, err := gh.Repositories.GetCommit(ctx, "octo", "repo", "feedbeef", nil)
	wantStatus(t, resp, err, http.StatusOK)
	if rc.GetCommitter().GetLogin() != "alice" || rc.GetAuthor().GetLogin() != "alice" {
		t.Fatalf("head commit of alice's PR: %+v", rc)
	}
	must(t, e.s.SetCommit(testRepo, "feedbeef", "alice", "web-flow"))
	rc, _, err = gh.Repositories.GetCommit(ctx, "octo", "repo", "feedbeef", nil)
	must(t, err)
	if rc.GetCommitter().GetLogin() != "web-flow" {
		t.Fatalf("committer %q", rc.GetCommitter().GetLogin())
	}
	_, resp, err = gh.Repositories.GetCommit(ctx, "octo", "repo", "0000", nil)
	wantStatus(t, resp, err, http.StatusUnprocessableEntity)
}

// TestWorkflowTokenCannotReadTeams: a workflow's GITHUB_TOKEN acts for the
// GitHub Actions App, which has no organization permissions: team and
// membership reads answer 403.
func TestWorkflowTokenCannotReadTeams(t *testing.T) {
	e := teamEnv(t)
	e.s.AddActionsToken("tok-workflow", "acme/widgets")
	for _, p := range []string{"/orgs/acme/teams/sre/memberships/ada", "/orgs/acme/teams/sre"} {
		resp, body := e.do("GET", p, "tok-workflow", "", nil)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "Resource not accessible by integration") {
			t.Fatalf("%s with GITHUB_TOKEN: %d %s", p, resp.StatusCode, body)
		}
	}
}
