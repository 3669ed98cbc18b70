package forge_test

import (
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/forge/forgetest"
)

// TestSandboxKeepsTheForgeContract runs the contract the go-github adapter
// keeps on the fake GitHub (internal/github) against the sandbox.
func TestSandboxKeepsTheForgeContract(t *testing.T) {
	forgetest.Run(t, func(t *testing.T) forgetest.Repo { return sandboxRepo(t, false) })
}

// TestRecentSandboxKeepsTheForgeContract runs it against the sandbox
// reading threads most recently updated first (Sandbox.Recent).
func TestRecentSandboxKeepsTheForgeContract(t *testing.T) {
	forgetest.Run(t, func(t *testing.T) forgetest.Repo { return sandboxRepo(t, true) })
}

func sandboxRepo(t *testing.T, recent bool) forgetest.Repo {
	clock := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	const bot = "github-actions[bot]"
	s := forge.NewSandbox("octo/repo", forge.User{Login: bot, Type: "Bot"}, clock.Now)
	s.AppID = 15368 // GitHub Actions, as the adapter on the fake
	checks := map[string][]forge.Check{}
	var f forge.Forge = s
	if recent {
		f = s.Recent()
	}
	return forgetest.Repo{
		Forge: f, Bot: bot, AppID: s.AppID, Now: clock.Now, Advance: clock.Advance,
		AddUser: func(login string, p access.Level) { s.AddUser(forge.User{Login: login}, p) },
		Issue:   func(author, title, body string) int { return s.CreateIssue(author, title, body).Number },
		Pull:    func(author, title, body, sha string) int { return s.CreatePull(author, title, body, sha).Number },
		Comment: func(author string, issue int, body string) int64 {
			c, err := s.Comment(author, issue, body)
			if err != nil {
				t.Fatal(err)
			}
			return c.ID
		},
		Review: func(pr int, reviewer, state, body string) { s.AddReview(pr, reviewer, state, body) },
		Check: func(sha, name, conclusion string) {
			checks[sha] = append(checks[sha], forge.Check{Name: name, Status: "completed", Conclusion: conclusion})
			s.SetChecks(sha, checks[sha]...)
		},
		File:     func(path string, data []byte) { s.SetFile(path, data) },
		Workflow: func(string) {},
		CompleteRun: func(id int64, conclusion string) {
			if _, ok := s.CompleteRun(id, conclusion); !ok {
				t.Fatalf("no run %d", id)
			}
		},
		RepoLabel: s.RepoLabel,
	}
}
