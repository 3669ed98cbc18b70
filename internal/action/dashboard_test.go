package action

import (
	"context"
	"errors"
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

// refusing is the adapter with GitHub refusing every pin as it refuses a
// token without issues: write.
type refusing struct {
	*gh.Client
	pins int
}

func (r *refusing) PinIssue(context.Context, string) error {
	r.pins++
	return errors.New("github pin the issue (GraphQL pinIssue): GraphQL: Resource not accessible by integration")
}

// TestAForbiddenPinIsAWarningOnce: a pin refused for want of permission
// leaves the created dashboard in place with a warning naming the
// permission and what to do; the next sweep neither pins nor warns. The
// figures: a sweep that creates the dashboard costs 5 requests (the
// configuration, the listing, the create, the listing again, the pin), one
// that finds it unchanged 2.
func TestAForbiddenPinIsAWarningOnce(t *testing.T) {
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
	api := &refusing{Client: c}
	ctx := context.Background()
	note, warning, err := keepDashboard(ctx, api, ".github/autopilot.yml", bot, nil)
	if err != nil || !strings.HasPrefix(note, "dashboard issue #1 created") || api.pins != 1 {
		t.Fatalf("the creating sweep: %q, %v, %d pins", note, err, api.pins)
	}
	for _, want := range []string{"#1 created but not pinned", "Resource not accessible by integration", "issues: write", "Pin issue", "does not try again"} {
		if !strings.Contains(warning, want) {
			t.Errorf("the warning lacks %q: %s", want, warning)
		}
	}
	if is, ok := g.Issue(repo, 1); !ok || is.State != "open" || is.Pinned {
		t.Fatalf("the dashboard after the refused pin: %+v", is)
	}
	from := len(g.Requests())
	note, warning, err = keepDashboard(ctx, api, ".github/autopilot.yml", bot, nil)
	if err != nil || note != "dashboard issue #1 unchanged" || warning != "" || api.pins != 1 {
		t.Fatalf("the next sweep: %q, %q, %v, %d pins in all", note, warning, err, api.pins)
	}
	if got := len(g.Requests()) - from; got != 2 {
		t.Errorf("an unchanged dashboard cost %d requests, want 2", got)
	}

	// With the pin granted: the creating sweep's requests, pin included.
	g2 := fakegithub.New(fakegithub.Options{})
	t.Cleanup(g2.Close)
	if err := g2.AddRepo(repo); err != nil {
		t.Fatal(err)
	}
	g2.AddActionsToken(tok, repo)
	if err := g2.SetFile(repo, ".github/autopilot.yml", []byte("dashboard: true\njira: {enabled: false}\n")); err != nil {
		t.Fatal(err)
	}
	c2, err := gh.New(gh.Options{Repo: repo, Token: tok, BaseURL: g2.URL(), MinMutationGap: -1, BotLogin: fakegithub.ActionsBotLogin})
	if err != nil {
		t.Fatal(err)
	}
	note, warning, err = keepDashboard(ctx, c2, ".github/autopilot.yml", bot, nil)
	if err != nil || note != "dashboard issue #1 created with 0 row(s), pinned" || warning != "" {
		t.Fatalf("the creating sweep with the pin granted: %q, %q, %v", note, warning, err)
	}
	if got := len(g2.Requests()); got != 5 {
		t.Errorf("creating the dashboard cost %d requests, want 5", got)
	}
}
