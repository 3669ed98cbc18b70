package github

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

func budgetClient(t *testing.T, g *fakegithub.Server, clock *fakeclock.Clock, tok string, gate *budget.Gate, maxWait time.Duration) *Client {
	t.Helper()
	c, err := New(Options{Repo: condRepo, Token: tok, BaseURL: g.URL(), Now: clock.Now, Sleep: clock.Sleep,
		MinMutationGap: -1, MaxWait: maxWait, Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBackgroundReadsStopAtTheReserveWhileInteractiveGoOn: with 10
// requests an hour and half kept for interactive work, background reads
// stop when 5 are left (without sending), interactive ones spend the rest.
func TestBackgroundReadsStopAtTheReserveWhileInteractiveGoOn(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	lim := fakegithub.Limits{}
	g := fakegithub.New(fakegithub.Options{Clock: clock.Now, Limits: &lim, RateLimit: 10})
	t.Cleanup(g.Close)
	if err := g.AddRepo(condRepo); err != nil {
		t.Fatal(err)
	}
	g.AddToken("ghs_replica_a", fakegithub.Identity{Login: "autopilot[bot]", Type: "Bot", AppID: 99, InstallationID: 7})
	var issues []int
	for range 10 {
		n, err := g.CreateIssue(condRepo, "alice", "t", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		issues = append(issues, n)
	}
	b := budget.New(budget.NewMemory(), budget.Options{Reserve: 0.5, Now: clock.Now})
	c := budgetClient(t, g, clock, "ghs_replica_a", b.For(7), time.Minute)
	ctx := context.Background()
	bg := budget.WithClass(ctx, budget.Background)
	for i := range 5 {
		if _, err := c.GetIssue(bg, issues[i]); err != nil {
			t.Fatalf("background read %d: %v", i, err)
		}
	}
	_, err := c.GetIssue(bg, issues[5])
	var rl *forge.RateLimitError
	if !errors.As(err, &rl) || rl.Until.IsZero() {
		t.Fatalf("background read at the reserve: %v, want a rate-limit wait until the reset", err)
	}
	if sent := g.LimitStats().ByInstallation[7].Requests; sent != 5 {
		t.Fatalf("%d requests reached GitHub, want 5 (the sixth waits unsent)", sent)
	}
	if w := b.Waiting(); len(w) != 1 || w[0].Installation != 7 {
		t.Fatalf("waiting %+v", w)
	}
	for i := 5; i < 10; i++ {
		if _, err := c.GetIssue(ctx, issues[i]); err != nil {
			t.Fatalf("interactive read %d: %v", i, err)
		}
	}
	if st := g.LimitStats(); st.Primary != 0 || st.ByInstallation[7].Used != 10 {
		t.Fatalf("primary-limit answers %d, used %d; want 0 and 10", st.Primary, st.ByInstallation[7].Used)
	}
}

// TestARetryAfterHoldsTheOtherClientsOfTheInstallation: a secondary limit
// answered to one client (replica) holds another client's next request
// of the same installation until the retry-after has passed.
func TestARetryAfterHoldsTheOtherClientsOfTheInstallation(t *testing.T) {
	g, clock := condFake(t)
	n, err := g.CreateIssue(condRepo, "alice", "t", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := budget.New(budget.NewMemory(), budget.Options{Now: clock.Now})
	// a gives up at once (it waits at most 10 s); other waits up to a minute.
	a := budgetClient(t, g, clock, "ghs_replica_a", b.For(7), 10*time.Second)
	other := budgetClient(t, g, clock, "ghs_replica_b", b.For(7), time.Minute)
	g.Script("GET", "/repos/octo/repo/issues/*", fakegithub.SecondaryRateLimit(30*time.Second))
	start := clock.Now()
	var rl *forge.RateLimitError
	if _, err := a.GetIssue(context.Background(), n); !errors.As(err, &rl) || !rl.Secondary {
		t.Fatalf("a: %v, want the secondary limit", err)
	}
	g.ResetLog()
	if _, err := other.ListComments(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	reqs := g.Requests()
	if len(reqs) != 1 || reqs[0].Time.Before(start.Add(30*time.Second)) {
		t.Fatalf("the other client's request went out at %v, want after %v", reqs, start.Add(30*time.Second))
	}
}

// TestTrackerWorkWaitsAtTheReserveAndSaysWhy: the sub-issue tracker's
// requests are background work: at the reserve a create is not sent and
// comes back as the tracker's rate limit, until the reset, naming the
// reserve (the sync's note in the state quotes it).
func TestTrackerWorkWaitsAtTheReserveAndSaysWhy(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	lim := fakegithub.Limits{}
	g := fakegithub.New(fakegithub.Options{Clock: clock.Now, Limits: &lim, RateLimit: 10})
	t.Cleanup(g.Close)
	if err := g.AddRepo(condRepo); err != nil {
		t.Fatal(err)
	}
	g.AddToken("ghs_replica_a", fakegithub.Identity{Login: "autopilot[bot]", Type: "Bot", AppID: 99, InstallationID: 7})
	var issues []int
	for range 6 {
		n, err := g.CreateIssue(condRepo, "alice", "t", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		issues = append(issues, n)
	}
	b := budget.New(budget.NewMemory(), budget.Options{Reserve: 0.5, Now: clock.Now})
	c := budgetClient(t, g, clock, "ghs_replica_a", b.For(7), time.Minute)
	ctx := context.Background()
	for i := range 5 { // interactive: 5 of 10 left afterwards
		if _, err := c.GetIssue(ctx, issues[i]); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.CreateIssue(ctx, "task", "", nil)
	var rl *tracker.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter < 59*time.Minute || !strings.Contains(rl.Reason, "interactive reserve") {
		t.Fatalf("tracker create at the reserve: %v, want a wait until the reset naming the reserve", err)
	}
	if n := g.Count("POST /repos/*/*/issues"); n != 0 {
		t.Fatalf("%d creates reached GitHub", n)
	}
	if _, err := c.GetIssue(ctx, issues[5]); err != nil {
		t.Fatalf("interactive read after the tracker stopped: %v", err)
	}
}
