package github

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// approverWorld: repository acme/widgets, team sre (ada active, bob
// invited), secret team security (carol), PR #1 changing two files with
// head abc committed by dave.
func approverWorld(t *testing.T) (*fakegithub.Server, *Client) {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	g := fakegithub.New(fakegithub.Options{Clock: clock.Now})
	t.Cleanup(g.Close)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const repo = "acme/widgets"
	must(g.AddRepo(repo))
	g.AddToken("tok-app", fakegithub.Identity{Login: "autopilot[bot]", Type: "Bot"})
	must(g.AddTeam("acme", "sre", false))
	must(g.AddTeam("acme", "security", true))
	must(g.SetTeamMember("acme", "sre", "ada", "active", ""))
	must(g.SetTeamMember("acme", "sre", "bob", "pending", ""))
	must(g.SetTeamMember("acme", "security", "carol", "active", ""))
	n, err := g.CreatePull(repo, "erin", "API", "Fixes #1", "api", "abc")
	must(err)
	must(g.SetPullFiles(repo, n, fakegithub.PullFile{Filename: "src/api/a.go"}, fakegithub.PullFile{Filename: "docs/x.md"}))
	must(g.SetCommit(repo, "abc", "erin", "dave"))
	must(g.SetCommit(repo, "def", "erin", "web-flow"))
	c, err := New(Options{Repo: repo, Token: "tok-app", BaseURL: g.URL(), Now: clock.Now, Sleep: clock.Sleep, MinMutationGap: -1, MaxRetries: -1})
	must(err)
	return g, c
}

func TestTeamMembershipStates(t *testing.T) {
	g, c := approverWorld(t)
	ctx := context.Background()
	for _, k := range []struct{ team, login, want string }{
		{"sre", "ada", "active"},
		{"sre", "bob", "pending"},
		{"sre", "mallory", "none"},          // 404 on the membership, the team is there
		{"security", "carol", "unreadable"}, // a secret team the token cannot see: 404 on both
		{"nope", "ada", "unreadable"},
	} {
		got, err := c.TeamMembership(ctx, "acme", k.team, k.login)
		if err != nil || got != k.want {
			t.Errorf("%s in %s: %q, %v; want %q", k.login, k.team, got, err, k.want)
		}
	}
	g.DenyMembersRead("acme", true)
	if got, err := c.TeamMembership(ctx, "acme", "sre", "ada"); err != nil || got != "unreadable" {
		t.Errorf("without Members: read: %q, %v; want unreadable", got, err)
	}
}

func TestPullFilesAndPusher(t *testing.T) {
	_, c := approverWorld(t)
	ctx := context.Background()
	files, err := c.PullFiles(ctx, 1)
	if err != nil || strings.Join(files, " ") != "src/api/a.go docs/x.md" {
		t.Fatalf("files %v, %v", files, err)
	}
	if p, err := c.HeadPusher(ctx, "abc"); err != nil || p != "dave" {
		t.Fatalf("pusher %q, %v; want the committer dave", p, err)
	}
	if p, err := c.HeadPusher(ctx, "def"); err != nil || p != "erin" {
		t.Fatalf("web commit: pusher %q, %v; want its author erin", p, err)
	}
	if _, err := c.HeadPusher(ctx, "nope"); err == nil {
		t.Fatal("an unknown commit is an error")
	}
}

func TestCodeOwnersAtThePullsBase(t *testing.T) {
	g, c := approverWorld(t)
	ctx := context.Background()
	if err := g.SetFile("acme/widgets", ".github/CODEOWNERS", []byte("* @acme/sre\n")); err != nil {
		t.Fatal(err)
	}
	pr, err := c.GetPull(ctx, 1)
	if err != nil || pr.BaseRef != "main" {
		t.Fatalf("base %q, %v", pr.BaseRef, err)
	}
	data, found, err := c.ReadFileAt(ctx, ".github/CODEOWNERS", pr.BaseRef)
	if err != nil || !found || string(data) != "* @acme/sre\n" {
		t.Fatalf("at main: %q %v %v", data, found, err)
	}
	if _, found, err := c.ReadFileAt(ctx, ".github/CODEOWNERS", "release"); err != nil || found {
		t.Fatalf("at a ref without it: found %v, %v", found, err)
	}
}
