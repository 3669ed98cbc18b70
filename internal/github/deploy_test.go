package github

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// The deploy gate's calls against the fake GitHub: the deploying run is
// read with its name; a status report and the answer are taken (204); a
// second answer is GitHub's 422, which the adapter returns as
// forge.ErrValidation (the carrier counts it as decided already).
func TestReviewDeploymentRuleAnswersOnceAndA422IsValidation(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	const repo = "octo/repo"
	g := fakegithub.New(fakegithub.Options{Clock: clock.Now})
	t.Cleanup(g.Close)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.AddRepo(repo))
	g.AddActionsToken("tok-bot", repo)
	g.AddUser("alice", "User")
	must(g.SetWorkflow(repo, "deploy.yml", "deploy", "autopilot ${{ inputs.session }}"))
	must(g.AddEnvironment(repo, "production"))
	must(g.EnableProtectionRule(repo, "production", fakegithub.ActionsAppID))
	c, err := New(Options{Repo: repo, Token: "tok-bot", BaseURL: g.URL(), Now: clock.Now, Sleep: clock.Sleep,
		MinMutationGap: -1, BotLogin: fakegithub.ActionsBotLogin, AppID: fakegithub.ActionsAppID})
	must(err)
	ctx := context.Background()
	run, err := c.DispatchWorkflow(ctx, "deploy.yml", "main", map[string]string{"session": "ap-1-deploy-c1-a1-s3"})
	must(err)
	_, err = g.RequestDeployment(repo, fakegithub.DeploymentRequest{RunID: run, Environment: "production"})
	must(err)

	wr, err := c.GetWorkflowRun(ctx, run)
	must(err)
	if wr.ID != run || wr.DisplayTitle != "autopilot ap-1-deploy-c1-a1-s3" {
		t.Errorf("run read as %+v", wr)
	}
	if _, err := c.GetWorkflowRun(ctx, run+1000); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("an unknown run: %v, want ErrNotFound", err)
	}
	must(c.ReviewDeploymentRule(ctx, run, "production", "", "waits for an answer on octo/repo#1"))
	must(c.ReviewDeploymentRule(ctx, run, "production", "approved", "approved by @ada on octo/repo#1"))
	if err := c.ReviewDeploymentRule(ctx, run, "production", "rejected", "again"); !errors.Is(err, forge.ErrValidation) {
		t.Errorf("a second answer: %v, want ErrValidation (422)", err)
	}
	must(g.ReviewDeployment(repo, run, "production", "alice", fakegithub.DeploymentApproved, "looks fine"))
	as, err := c.ListDeploymentApprovals(ctx, run)
	must(err)
	if len(as) != 1 || as[0].User != "alice" || as[0].State != "approved" || as[0].Comment != "looks fine" || len(as[0].Environments) != 1 || as[0].Environments[0] != "production" {
		t.Errorf("approvals read as %+v", as)
	}
	reqs := g.DeploymentRequests(repo)
	if len(reqs) != 1 || reqs[0].State != fakegithub.DeploymentApproved || len(reqs[0].Reports) != 1 {
		t.Errorf("requests %+v, want one approved with one report", reqs)
	}
}
