package github

import (
	"context"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

const condRepo = "octo/repo"

// condFake is the fake with its limits on (so it counts 304s and the
// budget spent per installation) and two tokens of installation 7, as two
// replicas each minting their own.
func condFake(t *testing.T) (*fakegithub.Server, *fakeclock.Clock) {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	lim := fakegithub.GitHubLimits()
	g := fakegithub.New(fakegithub.Options{Clock: clock.Now, Limits: &lim})
	t.Cleanup(g.Close)
	if err := g.AddRepo(condRepo); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"ghs_replica_a", "ghs_replica_b"} {
		g.AddToken(tok, fakegithub.Identity{Login: "autopilot[bot]", Type: "Bot", AppID: 99, InstallationID: 7})
	}
	return g, clock
}

func condClient(t *testing.T, g *fakegithub.Server, clock *fakeclock.Clock, tok string, cache transport.Cache) *Client {
	t.Helper()
	c, err := New(Options{Repo: condRepo, Token: tok, BaseURL: g.URL(), Now: clock.Now, Sleep: clock.Sleep,
		MinMutationGap: -1, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRepeatedReadsAreConditional reads each kind twice: the second read is
// answered 304 by the fake and is not charged to the installation's budget.
func TestRepeatedReadsAreConditional(t *testing.T) {
	g, clock := condFake(t)
	const sha = "0123456789abcdef0123456789abcdef01234567"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	g.AddUser("alice", "User")
	must(g.SetPermission(condRepo, "alice", "write"))
	pr, err := g.CreatePull(condRepo, "alice", "PR", "body", "patch-1", sha)
	must(err)
	must(g.SetPullFiles(condRepo, pr, fakegithub.PullFile{Filename: "a.go"}))
	_, err = g.AddCheckRun(condRepo, sha, "autopilot", "completed", "success")
	must(err)
	must(g.AddStatus(condRepo, sha, "ci", "success"))
	must(g.SetWorkflow(condRepo, "autopilot.yml", "autopilot", "autopilot"))
	must(g.SetFile(condRepo, ".github/autopilot.yml", []byte("flow: default\n")))
	parent, err := g.CreateIssue(condRepo, "alice", "parent", "", nil)
	must(err)
	c := condClient(t, g, clock, "ghs_replica_a", nil)
	ctx := context.Background()
	reads := []struct {
		name string
		read func() error
	}{
		{"check runs and statuses", func() error { _, err := c.ListChecks(ctx, sha); return err }},
		{"check runs by name", func() error { _, err := c.CheckRunsNamed(ctx, sha, "autopilot"); return err }},
		{"workflow runs", func() error { _, err := c.ListWorkflowRuns(ctx, "autopilot.yml", time.Time{}); return err }},
		{"sub-issues", func() error { _, err := c.SubIssues(ctx, parent); return err }},
		{"blocked by", func() error { _, err := c.BlockedBy(ctx, parent); return err }},
		{"tracker issue", func() error { _, err := c.ReadIssue(ctx, parent); return err }},
		{"file", func() error { _, _, err := c.ReadFile(ctx, ".github/autopilot.yml"); return err }},
		{"file at a ref", func() error { _, _, err := c.ReadFileAt(ctx, ".github/autopilot.yml", "main"); return err }},
		{"permission", func() error { _, err := c.Permission(ctx, "alice"); return err }},
		{"pull", func() error { _, err := c.GetPull(ctx, pr); return err }},
		{"pull files", func() error { _, err := c.PullFiles(ctx, pr); return err }},
	}
	for _, r := range reads {
		if err := r.read(); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		before, hits := g.LimitStats(), c.Stats().ConditionalHits
		if err := r.read(); err != nil {
			t.Fatalf("%s again: %v", r.name, err)
		}
		after := g.LimitStats()
		sent := after.ByInstallation[7].Requests - before.ByInstallation[7].Requests
		if n := after.NotModified - before.NotModified; n == 0 || n != sent {
			t.Errorf("%s again: %d of %d requests answered 304, want all", r.name, n, sent)
		}
		if used := after.ByInstallation[7].Used - before.ByInstallation[7].Used; used != 0 {
			t.Errorf("%s again: cost %d of the budget, want 0", r.name, used)
		}
		if c.Stats().ConditionalHits-hits != sent {
			t.Errorf("%s again: client counted %d conditional hits, want %d", r.name, c.Stats().ConditionalHits-hits, sent)
		}
	}
}

// TestSharedCacheMakesTheOtherReplicasReadA304: two clients (two replicas,
// two tokens of one installation) share a cache: what one read, the other
// reads again as a free 304.
func TestSharedCacheMakesTheOtherReplicasReadA304(t *testing.T) {
	g, clock := condFake(t)
	n, err := g.CreateIssue(condRepo, "alice", "shared", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	shared := transport.NewMemoryCache(0, 0)
	a := condClient(t, g, clock, "ghs_replica_a", shared.For(7))
	b := condClient(t, g, clock, "ghs_replica_b", shared.For(7))
	ctx := context.Background()
	if _, err := a.GetIssue(ctx, n); err != nil {
		t.Fatal(err)
	}
	is, err := b.GetIssue(ctx, n)
	if err != nil || is.Title != "shared" {
		t.Fatalf("replica b: %+v, %v", is, err)
	}
	st := g.LimitStats()
	if st.NotModified != 1 || st.ByInstallation[7].Used != 1 || b.Stats().ConditionalHits != 1 {
		t.Fatalf("304s %d, budget used %d, b's hits %d; want 1, 1, 1", st.NotModified, st.ByInstallation[7].Used, b.Stats().ConditionalHits)
	}
}
