package fakegithub

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/access"
)

func TestCollaboratorPermissionShapes(t *testing.T) {
	e := newEnv(t)
	must(t, e.s.AddRepo("octo/private"))
	must(t, e.s.SetRepo("octo/private", true, ""))
	e.s.AddUser("stranger", "User")
	for _, p := range []access.Level{"admin", "maintain", "write", "triage", "read", "none"} {
		must(t, e.s.SetPermission(testRepo, "u-"+string(p), p))
	}
	tests := []struct {
		repo, login      string
		status           int
		permission, role string
	}{
		{testRepo, "u-admin", 200, "admin", "admin"},
		{testRepo, "u-maintain", 200, "write", "maintain"},
		{testRepo, "u-write", 200, "write", "write"},
		{testRepo, "u-triage", 200, "read", "triage"},
		{testRepo, "u-read", 200, "read", "read"},
		{testRepo, "u-none", 200, "none", "none"},
		{testRepo, "octo", 200, "admin", "admin"},
		{testRepo, "stranger", 200, "read", "read"},
		{"octo/private", "stranger", 200, "none", "none"},
		{testRepo, "ghost", 404, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.repo+"/"+tt.login, func(t *testing.T) {
			var out struct {
				Permission string `json:"permission"`
				RoleName   string `json:"role_name"`
				User       struct {
					Login       string          `json:"login"`
					Permissions map[string]bool `json:"permissions"`
				} `json:"user"`
			}
			resp := e.doJSON("GET", "/repos/"+tt.repo+"/collaborators/"+tt.login+"/permission", humanTok, "", &out)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status != 200 {
				return
			}
			if out.Permission != tt.permission || out.RoleName != tt.role || out.User.Login != tt.login {
				t.Fatalf("got %+v, want permission %s role %s", out, tt.permission, tt.role)
			}
			if out.User.Permissions["push"] != (tt.permission == "write" || tt.permission == "admin") {
				t.Fatalf("user.permissions %v disagree with %s", out.User.Permissions, tt.permission)
			}
		})
	}
	lvl, resp, err := e.client(humanTok).Repositories.GetPermissionLevel(context.Background(), "octo", "repo", "u-triage")
	wantStatus(t, resp, err, http.StatusOK)
	if lvl.GetPermission() != "read" {
		t.Fatalf("go-github read permission %q", lvl.GetPermission())
	}
}

func TestIssuesListFiltersAndIncludesPulls(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	gh := e.client(humanTok)
	a := e.issue("a", "autopilot")
	e.clock.Advance(time.Minute)
	b := e.issue("b", "autopilot", "bug")
	e.clock.Advance(time.Minute)
	p, err := e.s.CreatePull(testRepo, "bob", "pr", "", "feature", "abc123")
	must(t, err)
	_, _, err = gh.Issues.AddLabelsToIssue(ctx, "octo", "repo", p, []string{"autopilot"})
	must(t, err)
	e.clock.Advance(time.Minute)
	closed, resp, err := gh.Issues.Edit(ctx, "octo", "repo", a, &github.IssueRequest{State: github.String("closed")})
	wantStatus(t, resp, err, http.StatusOK)
	if closed.GetState() != "closed" || !closed.GetClosedAt().Time.Equal(epoch.Add(3*time.Minute)) {
		t.Fatalf("closed issue %s at %v", closed.GetState(), closed.GetClosedAt())
	}

	tests := []struct {
		opts *github.IssueListByRepoOptions
		want []int
	}{
		{&github.IssueListByRepoOptions{}, []int{p, b}},
		{&github.IssueListByRepoOptions{State: "all"}, []int{p, b, a}},
		{&github.IssueListByRepoOptions{State: "all", Direction: "asc"}, []int{a, b, p}},
		{&github.IssueListByRepoOptions{Labels: []string{"autopilot", "BUG"}}, []int{b}},
		{&github.IssueListByRepoOptions{State: "closed"}, []int{a}},
	}
	for _, tt := range tests {
		got, resp, err := gh.Issues.ListByRepo(ctx, "octo", "repo", tt.opts)
		wantStatus(t, resp, err, http.StatusOK)
		var nums []int
		for _, is := range got {
			nums = append(nums, is.GetNumber())
			if is.GetNumber() == p && !is.IsPullRequest() {
				t.Fatal("pull request listed without the pull_request key")
			}
			if is.GetNumber() != p && is.IsPullRequest() {
				t.Fatalf("issue %d has a pull_request key", is.GetNumber())
			}
		}
		if !slices.Equal(nums, tt.want) {
			t.Errorf("%+v: got %v, want %v", tt.opts, nums, tt.want)
		}
	}
	_, resp, err = gh.Issues.Edit(ctx, "octo", "repo", b, &github.IssueRequest{State: github.String("merged")})
	wantStatus(t, resp, err, http.StatusUnprocessableEntity)
}

func TestPullsReviewsAndChecks(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	gh := e.client(humanTok)
	p, err := e.s.CreatePull(testRepo, "alice", "feature", "does things", "feature-x", "deadbeef")
	must(t, err)
	pr, resp, err := gh.PullRequests.Get(ctx, "octo", "repo", p)
	wantStatus(t, resp, err, http.StatusOK)
	if pr.GetHead().GetSHA() != "deadbeef" || pr.GetHead().GetRef() != "feature-x" || pr.GetMerged() || pr.GetUser().GetLogin() != "alice" {
		t.Fatalf("pull %+v", pr)
	}
	_, resp, err = gh.PullRequests.Get(ctx, "octo", "repo", e.issue("not a PR"))
	wantStatus(t, resp, err, http.StatusNotFound)

	_, resp, err = gh.PullRequests.CreateReview(ctx, "octo", "repo", p, &github.PullRequestReviewRequest{Event: github.String("APPROVE")})
	wantStatus(t, resp, err, http.StatusUnprocessableEntity)
	rev, resp, err := e.client(writerTok).PullRequests.CreateReview(ctx, "octo", "repo", p, &github.PullRequestReviewRequest{Event: github.String("APPROVE")})
	wantStatus(t, resp, err, http.StatusOK)
	if rev.GetState() != "APPROVED" || rev.GetCommitID() != "deadbeef" {
		t.Fatalf("review %+v", rev)
	}
	_, err = e.s.SubmitReview(testRepo, p, "carol", "CHANGES_REQUESTED", "no")
	must(t, err)
	revs, _, err := gh.PullRequests.ListReviews(ctx, "octo", "repo", p, nil)
	must(t, err)
	if len(revs) != 2 || revs[1].GetUser().GetLogin() != "carol" || revs[1].GetState() != "CHANGES_REQUESTED" {
		t.Fatalf("reviews %v", revs)
	}

	_, err = e.s.AddCheckRun(testRepo, "deadbeef", "build", "completed", "success")
	must(t, err)
	_, err = e.s.AddCheckRun(testRepo, "deadbeef", "test", "in_progress", "")
	must(t, err)
	checks, _, err := gh.Checks.ListCheckRunsForRef(ctx, "octo", "repo", "deadbeef", nil)
	must(t, err)
	if checks.GetTotal() != 2 || checks.CheckRuns[0].GetName() != "test" || checks.CheckRuns[1].GetConclusion() != "success" {
		t.Fatalf("check runs %+v", checks)
	}

	tests := []struct {
		statuses [][2]string
		want     string
	}{
		{nil, "pending"},
		{[][2]string{{"ci", "success"}}, "success"},
		{[][2]string{{"ci", "success"}, {"lint", "pending"}}, "pending"},
		{[][2]string{{"ci", "failure"}, {"lint", "pending"}}, "failure"},
		{[][2]string{{"ci", "failure"}, {"ci", "success"}}, "success"},
	}
	for i, tt := range tests {
		sha := fmt.Sprintf("sha%d", i)
		for _, st := range tt.statuses {
			must(t, e.s.AddStatus(testRepo, sha, st[0], st[1]))
		}
		cs, _, err := gh.Repositories.GetCombinedStatus(ctx, "octo", "repo", sha, nil)
		must(t, err)
		if cs.GetState() != tt.want {
			t.Errorf("statuses %v: combined %q, want %q", tt.statuses, cs.GetState(), tt.want)
		}
	}

	must(t, e.s.SetIssueState(testRepo, p, "closed", true))
	pr, _, err = gh.PullRequests.Get(ctx, "octo", "repo", p)
	must(t, err)
	if !pr.GetMerged() || pr.GetState() != "closed" {
		t.Fatalf("merged pull %v %s", pr.GetMerged(), pr.GetState())
	}
}

func TestContentsBase64RawAndMissing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	gh := e.client(humanTok)
	cfg := []byte("flow: default\n" + string(make([]byte, 0)) + "steps:\n  - plan\n  - build\n  - review with a line long enough to wrap the base64 output\n")
	must(t, e.s.SetFile(testRepo, ".github/autopilot.yml", cfg))
	must(t, e.s.SetFile(testRepo, ".github/workflows/autopilot.yml", []byte("on: issues")))

	file, dir, resp, err := gh.Repositories.GetContents(ctx, "octo", "repo", ".github/autopilot.yml", nil)
	wantStatus(t, resp, err, http.StatusOK)
	got, err := file.GetContent()
	must(t, err)
	if dir != nil || got != string(cfg) || file.GetSHA() != blobSHA(cfg) {
		t.Fatalf("content %q sha %s", got, file.GetSHA())
	}

	resp2, raw := e.do("GET", "/repos/octo/repo/contents/.github/autopilot.yml", humanTok, "", map[string]string{"Accept": "application/vnd.github.raw"})
	if resp2.StatusCode != 200 || string(raw) != string(cfg) {
		t.Fatalf("raw: %d %q", resp2.StatusCode, raw)
	}

	_, dir, resp, err = gh.Repositories.GetContents(ctx, "octo", "repo", ".github", nil)
	wantStatus(t, resp, err, http.StatusOK)
	if len(dir) != 2 || dir[0].GetName() != "autopilot.yml" || dir[1].GetType() != "dir" {
		t.Fatalf("listing %v", dir)
	}
	_, _, resp, err = gh.Repositories.GetContents(ctx, "octo", "repo", "missing.yml", nil)
	wantStatus(t, resp, err, http.StatusNotFound)
	_, _, resp, err = gh.Repositories.GetContents(ctx, "octo", "repo", ".github/autopilot.yml", &github.RepositoryContentGetOptions{Ref: "other"})
	wantStatus(t, resp, err, http.StatusNotFound)

	must(t, e.s.SetRepo(testRepo, false, "trunk"))
	r, _, err := gh.Repositories.Get(ctx, "octo", "repo")
	must(t, err)
	if r.GetDefaultBranch() != "trunk" || r.GetFullName() != testRepo {
		t.Fatalf("repo %s default %s", r.GetFullName(), r.GetDefaultBranch())
	}
}

func TestControlAPIRejectsUnknownObjects(t *testing.T) {
	e := newEnv(t)
	checks := map[string]error{
		"AddRepo bad name":  e.s.AddRepo("noslash"),
		"AddRepo duplicate": e.s.AddRepo(testRepo),
		"SetPermission bad": e.s.SetPermission(testRepo, "x", "owner"),
		"DeleteComment":     e.s.DeleteComment(12345),
		"CompleteRun":       e.s.CompleteRun(12345, "success"),
		"SetFile":           e.s.SetFile("no/repo", "a", []byte("x")),
		"RegisterApp dup":   e.s.RegisterApp(ActionsAppID, "x", &rsaKey(t).PublicKey),
	}
	_, err := e.s.CreateIssue("no/repo", "a", "t", "b", nil)
	checks["CreateIssue"] = err
	_, err = e.s.AddComment(testRepo, 99, "a", "b")
	checks["AddComment"] = err
	_, err = e.s.CreateIssue(testRepo, "a", "t", "b", []string{string(make([]byte, 51))})
	checks["CreateIssue long label"] = err
	for name, err := range checks {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, ok := e.s.Issue(testRepo, 1); ok {
		t.Fatal("a rejected CreateIssue left an issue behind")
	}
}
