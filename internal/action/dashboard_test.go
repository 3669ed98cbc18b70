package action

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/dashissue"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// racing is the adapter with another sweep creating its dashboard just
// before this one creates its own: both listed none.
type racing struct {
	*gh.Client
	other func()
}

func (r racing) CreateIssue(ctx context.Context, title, body string, labels []string) (tracker.GHIssue, error) {
	r.other()
	return r.Client.CreateIssue(ctx, title, body, labels)
}

// TestTwoSweepsCreatingAtOnceLeaveOneDashboard: a sweep that lists no
// dashboard, then creates one while a concurrent sweep's is already there,
// closes its own (the newer); the next sweep finds one and writes nothing.
func TestTwoSweepsCreatingAtOnceLeaveOneDashboard(t *testing.T) {
	const repo, tok = "acme/widgets", "ghs_actions"
	g := fakegithub.New(fakegithub.Options{})
	t.Cleanup(g.Close)
	if err := g.AddRepo(repo); err != nil {
		t.Fatal(err)
	}
	g.AddActionsToken(tok, repo)
	if err := g.SetFile(repo, ".github/autopilot.yml", []byte("dashboard: true\njira: {enabled: false}\n")); err != nil {
		t.Fatal(err)
	}
	c, err := gh.New(gh.Options{Repo: repo, Token: tok, BaseURL: g.URL(), MinMutationGap: -1, BotLogin: fakegithub.ActionsBotLogin})
	if err != nil {
		t.Fatal(err)
	}
	bot := dashissue.Bot{Login: fakegithub.ActionsBotLogin}
	first := 0
	api := racing{Client: c, other: func() {
		first, err = g.CreateIssue(repo, fakegithub.ActionsBotLogin, dashissue.Title, dashissue.Render(nil), []string{dashissue.Label})
		if err != nil {
			t.Fatal(err)
		}
	}}
	ctx := context.Background()
	note, _, err := keepDashboard(ctx, api, ".github/autopilot.yml", bot, nil)
	if err != nil || !strings.Contains(note, "closed: another sweep created one first") {
		t.Fatalf("the racing sweep: %q, %v", note, err)
	}
	open := 0
	for i := 1; i < 10; i++ {
		if is, ok := g.Issue(repo, i); ok && is.State == "open" && strings.HasPrefix(is.Body, dashissue.Marker) {
			open++
			if is.Number != first {
				t.Errorf("#%d stayed open, not the first one #%d", is.Number, first)
			}
		}
	}
	if open != 1 {
		t.Fatalf("%d dashboards open after the race, want 1", open)
	}
	note, _, err = keepDashboard(ctx, c, ".github/autopilot.yml", bot, nil)
	if err != nil || note != "dashboard issue #"+itoa(first)+" unchanged" {
		t.Fatalf("the next sweep: %q, %v", note, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
