package fakegithub

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-github/v60/github"
)

const headSHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

// TestCheckRunCreateUpdateList: an App creates a check run with buttons
// through go-github, updates it, and the list for the ref shows it newest
// first with what was written.
func TestCheckRunCreateUpdateList(t *testing.T) {
	e := newEnv(t)
	e.s.AddActionsToken("ghs_actions", testRepo)
	gh := e.client("ghs_actions")
	ctx := context.Background()
	run, resp, err := gh.Checks.CreateCheckRun(ctx, "octo", "repo", github.CreateCheckRunOptions{
		Name: "autopilot", HeadSHA: headSHA, Status: github.String("completed"), Conclusion: github.String("action_required"),
		ExternalID: github.String("autopilot#3"), DetailsURL: github.String("https://example.test/choose"),
		Output:  &github.CheckRunOutput{Title: github.String("Decision required"), Summary: github.String("pick one")},
		Actions: []*github.CheckRunAction{{Label: "A: Approve", Description: "Approve and continue", Identifier: "g4.A"}},
	})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %v (%v)", err, resp)
	}
	if run.GetConclusion() != "action_required" || run.GetExternalID() != "autopilot#3" || run.GetApp().GetID() != ActionsAppID || run.GetOutput().GetSummary() != "pick one" {
		t.Fatalf("created run = %+v", run)
	}
	if _, _, err := gh.Checks.CreateCheckRun(ctx, "octo", "repo", github.CreateCheckRunOptions{Name: "autopilot", HeadSHA: headSHA, Status: github.String("in_progress")}); err != nil {
		t.Fatal(err)
	}
	upd, _, err := gh.Checks.UpdateCheckRun(ctx, "octo", "repo", run.GetID(), github.UpdateCheckRunOptions{Name: "autopilot", Conclusion: github.String("success"),
		Output: &github.CheckRunOutput{Title: github.String("Merge gate passed"), Summary: github.String("done")}})
	if err != nil || upd.GetStatus() != "completed" || upd.GetConclusion() != "success" || upd.GetOutput().GetTitle() != "Merge gate passed" {
		t.Fatalf("update: %v, %+v", err, upd)
	}
	list, _, err := gh.Checks.ListCheckRunsForRef(ctx, "octo", "repo", headSHA, &github.ListCheckRunsOptions{CheckName: github.String("autopilot")})
	if err != nil {
		t.Fatal(err)
	}
	if list.GetTotal() != 2 || list.CheckRuns[0].GetStatus() != "in_progress" || list.CheckRuns[1].GetConclusion() != "success" {
		t.Fatalf("list = %d runs, first %s, second %s", list.GetTotal(), list.CheckRuns[0].GetStatus(), list.CheckRuns[1].GetConclusion())
	}
	got := e.s.CheckRuns(testRepo, headSHA)
	if len(got) != 2 || len(got[0].Actions) != 1 || got[0].Actions[0].Identifier != "g4.A" {
		t.Fatalf("CheckRuns = %+v", got)
	}
	one, _, err := gh.Checks.GetCheckRun(ctx, "octo", "repo", run.GetID())
	if err != nil || one.GetID() != run.GetID() || one.GetDetailsURL() != "https://example.test/choose" {
		t.Fatalf("get: %v %+v", err, one)
	}
}

// TestCheckRunRefusals: a user token cannot write check runs, another App
// cannot update one, and GitHub's limits (three actions, 20-character
// identifiers, a conclusion when completed) are enforced.
func TestCheckRunRefusals(t *testing.T) {
	e := newEnv(t)
	e.s.AddActionsToken("ghs_actions", testRepo)
	e.s.AddToken("ghs_other", Identity{Login: "other[bot]", Type: "Bot", AppID: 99})
	ctx := context.Background()
	opt := github.CreateCheckRunOptions{Name: "autopilot", HeadSHA: headSHA, Status: github.String("in_progress")}
	if _, resp, err := e.client(humanTok).Checks.CreateCheckRun(ctx, "octo", "repo", opt); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a user token created a check run: %v", err)
	}
	run, _, err := e.client("ghs_actions").Checks.CreateCheckRun(ctx, "octo", "repo", opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, resp, err := e.client("ghs_other").Checks.UpdateCheckRun(ctx, "octo", "repo", run.GetID(), github.UpdateCheckRunOptions{Name: "x"}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("another App updated the check run: %v", err)
	}
	act := func(id string) *github.CheckRunAction {
		return &github.CheckRunAction{Label: "L", Description: "D", Identifier: id}
	}
	bad := map[string]github.CreateCheckRunOptions{
		"four actions":       {Name: "a", HeadSHA: headSHA, Actions: []*github.CheckRunAction{act("1"), act("2"), act("3"), act("4")}},
		"long identifier":    {Name: "a", HeadSHA: headSHA, Actions: []*github.CheckRunAction{act("123456789012345678901")}},
		"completed, no end":  {Name: "a", HeadSHA: headSHA, Status: github.String("completed")},
		"no head":            {Name: "a"},
		"summary missing":    {Name: "a", HeadSHA: headSHA, Output: &github.CheckRunOutput{Title: github.String("t")}},
		"unknown conclusion": {Name: "a", HeadSHA: headSHA, Conclusion: github.String("green")},
	}
	for name, o := range bad {
		_, _, err := e.client("ghs_actions").Checks.CreateCheckRun(ctx, "octo", "repo", o)
		var ge *github.ErrorResponse
		if !errors.As(err, &ge) || ge.Response.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("%s: err %v, want 422", name, err)
		}
	}
	if n := len(e.s.CheckRuns(testRepo, headSHA)); n != 1 {
		t.Errorf("%d check runs stored, want only the valid one", n)
	}
}
