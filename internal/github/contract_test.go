package github

import (
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/forge/forgetest"
)

// TestAdapterOnTheFakeKeepsTheForgeContract runs the contract forge.Sandbox
// keeps (internal/forge) against this adapter on the fake GitHub.
func TestAdapterOnTheFakeKeepsTheForgeContract(t *testing.T) {
	forgetest.Run(t, func(t *testing.T) forgetest.Repo {
		clock := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
		const repo, bot = "octo/repo", fakegithub.ActionsBotLogin
		g := fakegithub.New(fakegithub.Options{Clock: clock.Now})
		t.Cleanup(g.Close)
		check := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		check(g.AddRepo(repo))
		g.AddActionsToken("tok-bot", repo)
		c, err := New(Options{Repo: repo, Token: "tok-bot", BaseURL: g.URL(), Now: clock.Now, Sleep: clock.Sleep,
			MinMutationGap: -1, BotLogin: bot})
		check(err)
		return forgetest.Repo{
			Forge: c, Bot: bot, AppID: fakegithub.ActionsAppID, Now: clock.Now, Advance: clock.Advance,
			AddUser: func(login string, p access.Level) { g.AddUser(login, "User"); check(g.SetPermission(repo, login, p)) },
			Issue: func(author, title, body string) int {
				n, err := g.CreateIssue(repo, author, title, body, nil)
				check(err)
				return n
			},
			Pull: func(author, title, body, sha string) int {
				n, err := g.CreatePull(repo, author, title, body, "patch-1", sha)
				check(err)
				return n
			},
			Comment: func(author string, issue int, body string) int64 {
				cm, err := g.AddComment(repo, issue, author, body)
				check(err)
				return cm.ID
			},
			Review: func(pr int, reviewer, state, body string) {
				_, err := g.SubmitReview(repo, pr, reviewer, state, body)
				check(err)
			},
			Check: func(sha, name, conclusion string) {
				_, err := g.AddCheckRun(repo, sha, name, "completed", conclusion)
				check(err)
			},
			File:        func(path string, data []byte) { check(g.SetFile(repo, path, data)) },
			Workflow:    func(file string) { check(g.SetWorkflow(repo, file, "autopilot", "autopilot ${{ inputs.session }}")) },
			CompleteRun: func(id int64, conclusion string) { check(g.CompleteRun(id, conclusion)) },
			RepoLabel: func(name string) (forge.Label, bool) {
				for _, l := range g.RepoLabels(repo) {
					if l.Name == name {
						return l, true
					}
				}
				return forge.Label{}, false
			},
		}
	})
}
