package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// gqlWorld is a fake GitHub with one issue and a client on GITHUB_TOKEN.
func gqlWorld(t *testing.T, prefix string) (*fakegithub.Server, *Client, *fakeClock, int) {
	t.Helper()
	clock := &fakeClock{now: epoch}
	srv := fakegithub.New(fakegithub.Options{Clock: clock.Now})
	t.Cleanup(srv.Close)
	const repo = "acme/widgets"
	if err := srv.AddRepo(repo); err != nil {
		t.Fatal(err)
	}
	srv.AddActionsToken("ghs_x", repo)
	n, err := srv.CreateIssue(repo, "maria", "Long", "body", []string{"autopilot"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Repo: repo, Token: "ghs_x", BaseURL: srv.URL() + prefix, Now: clock.Now, Sleep: clock.Sleep,
		MinMutationGap: -1, BotLogin: fakegithub.ActionsBotLogin, AppID: fakegithub.ActionsAppID})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c, clock, n
}

func TestReadRecentReadsNewestPagesBackwards(t *testing.T) {
	for _, prefix := range []string{"", "/api/v3"} {
		t.Run("base"+prefix, func(t *testing.T) {
			srv, c, clock, n := gqlWorld(t, prefix)
			ctx := context.Background()
			var ids []int64
			for i := range 250 {
				clock.Advance(time.Minute)
				cm, err := srv.AddComment("acme/widgets", n, "devin", fmt.Sprintf("remark %d", i))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, cm.ID)
			}
			clock.Advance(time.Minute)
			st, err := srv.AddComment("acme/widgets", n, fakegithub.ActionsBotLogin, "<!-- autopilot:state -->\nstate")
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Minute)
			// An edit brings the oldest comment to the front of the order.
			if _, err := srv.EditComment(ids[0], "devin", "remark 0, edited"); err != nil {
				t.Fatal(err)
			}
			if err := srv.React(ids[0], "maria", "+1"); err != nil {
				t.Fatal(err)
			}
			before := c.Stats()
			pages := 0
			rec, err := c.ReadRecent(ctx, n, func(_ forge.Issue, page []forge.Comment) bool { pages++; return false })
			if err != nil {
				t.Fatal(err)
			}
			cs, all := rec.Comments, rec.All
			if is := rec.Issue; is.Number != n || is.Title != "Long" || is.State != "open" || is.Author.Login != "maria" || len(is.Labels) != 1 || is.Labels[0] != "autopilot" {
				t.Errorf("issue as read: %+v", is)
			}
			if all || pages != 1 || len(cs) != 100 {
				t.Fatalf("one page asked: got %d comments, all=%v, %d pages", len(cs), all, pages)
			}
			got := map[int64]forge.Comment{}
			for _, cm := range cs {
				got[cm.ID] = cm
			}
			bot, ok := got[st.ID]
			if !ok || bot.Author.Login != fakegithub.ActionsBotLogin || !bot.Author.IsBot() || bot.AppID != fakegithub.ActionsAppID {
				t.Errorf("state comment as read: %+v (want login %s, Bot, App %d)", bot, fakegithub.ActionsBotLogin, fakegithub.ActionsAppID)
			}
			ed, ok := got[ids[0]]
			if !ok || ed.Body != "remark 0, edited" || ed.Reactions["+1"] != 1 || ed.Author.Login != "devin" || ed.Author.IsBot() {
				t.Errorf("edited comment as read: %+v", ed)
			}
			if _, ok := got[ids[1]]; ok {
				t.Errorf("the page holds comment %d, which nothing updated since the 100 newest", ids[1])
			}
			after := c.Stats()
			if after.Total-before.Total != 1 || after.RateRemaining != before.RateRemaining {
				t.Errorf("requests %d (want 1), REST budget %d → %d (GraphQL has its own)", after.Total-before.Total, before.RateRemaining, after.RateRemaining)
			}
			// Reading on to the start returns the whole thread once.
			rec, err = c.ReadRecent(ctx, n, func(forge.Issue, []forge.Comment) bool { return true })
			if cs, all = rec.Comments, rec.All; err != nil || !all || len(cs) != 251 {
				t.Fatalf("whole thread: %d comments, all=%v, err %v", len(cs), all, err)
			}
			seen := map[int64]bool{}
			for _, cm := range cs {
				if seen[cm.ID] {
					t.Errorf("comment %d read twice", cm.ID)
				}
				seen[cm.ID] = true
			}
			if got := srv.Count("POST /graphql"); got != 1+3 {
				t.Errorf("%d GraphQL requests, want 4 (one page, then three)", got)
			}
		})
	}
}

func TestReadRecentErrors(t *testing.T) {
	srv, c, _, _ := gqlWorld(t, "")
	ctx := context.Background()
	if _, err := c.ReadRecent(ctx, 999, func(forge.Issue, []forge.Comment) bool { return true }); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("missing issue: %v, want ErrNotFound", err)
	}
	// GraphQL reports failure with HTTP 200 and an errors array.
	srv.Script("POST", "/graphql", fakegithub.Step{Status: http.StatusOK, Body: `{"errors":[{"message":"Something went wrong while executing your query."}]}`})
	_, err := c.ReadRecent(ctx, 1, func(forge.Issue, []forge.Comment) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "Something went wrong") {
		t.Errorf("errors array: %v", err)
	}
	srv.Script("POST", "/graphql", fakegithub.Step{Status: http.StatusOK, Body: `{"errors":[{"type":"RATE_LIMITED","message":"API rate limit exceeded"}]}`})
	_, err = c.ReadRecent(ctx, 1, func(forge.Issue, []forge.Comment) bool { return true })
	var rl *forge.RateLimitError
	if !errors.As(err, &rl) {
		t.Errorf("RATE_LIMITED: %v, want a *forge.RateLimitError", err)
	}
	// A REST request is not held back by GraphQL's spent budget.
	if _, err := c.GetIssue(ctx, 1); err != nil {
		t.Errorf("REST after GraphQL's budget ran out: %v", err)
	}
}

func TestReadRecentInDryRun(t *testing.T) {
	srv, _, clock, n := gqlWorld(t, "")
	c, err := New(Options{Repo: "acme/widgets", Token: "ghs_x", BaseURL: srv.URL(), Now: clock.Now, Sleep: clock.Sleep,
		MinMutationGap: -1, BotLogin: fakegithub.ActionsBotLogin, AppID: fakegithub.ActionsAppID, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadRecent(context.Background(), n, func(forge.Issue, []forge.Comment) bool { return true }); err != nil {
		t.Errorf("a GraphQL read in dry-run: %v", err)
	}
}
