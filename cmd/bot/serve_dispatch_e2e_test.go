package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// TestServeRunTheAppDispatchedCompletesItsStep: the App dispatches a step's
// workflow with its installation token; GitHub reports the run's
// completion with the App's bot as sender, actor and triggering actor (the
// account whose token dispatched it). That delivery is queued (202, not
// ignored as the App's own) and completes the step at once, matched by the
// run id the state recorded — not at the next sweep.
func TestServeRunTheAppDispatchedCompletesItsStep(t *testing.T) {
	const workflow = "autopilot-step.yml"
	g := apptest.New(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.SetFile(apptest.Repo, ".github/autopilot.yml", []byte("default_flow: greenfield\njira: {enabled: false}\n"+
		"steps:\n  problem: {kind: dispatch, workflow: "+workflow+", timeout: 30m}\n")))
	must(g.SetWorkflow(apptest.Repo, workflow, "autopilot-step", "autopilot ${{ inputs.session }}"))
	n := g.Issue(apptest.Repo, "Add CSV export")
	r := startReplica(t, "dispatch", baseEnv(t, g))
	r.mustAccept(g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot"))
	waitFor(t, "the step's run dispatched and recorded", func() bool {
		st := g.State(apptest.Repo, n)
		return st != nil && st.Exec != nil && st.Exec.RunID != 0
	})
	st := g.State(apptest.Repo, n)
	var run *fakegithub.WorkflowRun
	for _, rn := range g.Runs(apptest.Repo) {
		if rn.ID == st.Exec.RunID {
			run = &rn
		}
	}
	if run == nil {
		t.Fatalf("the state records run %d, which the fake does not have", st.Exec.RunID)
	}
	if !strings.EqualFold(run.Actor, apptest.BotLogin) {
		t.Fatalf("run dispatched by %q, want the App's bot %s", run.Actor, apptest.BotLogin)
	}
	must(g.CompleteRun(run.ID, "success"))
	bot := map[string]any{"login": apptest.BotLogin, "id": 9_000_001, "type": "Bot", "site_admin": false}
	body := ghtest.Mutate(t, ghtest.WithRepo(t, ghtest.Payload(t, "workflow_run.completed.json"), apptest.Repo), map[string]any{
		"workflow_run.id": run.ID, "workflow_run.name": "autopilot-step", "workflow_run.display_title": run.DisplayTitle,
		"workflow_run.status": "completed", "workflow_run.conclusion": "success", "workflow_run.event": "workflow_dispatch",
		"workflow_run.path": run.Workflow, "workflow_run.head_branch": "main", "workflow_run.pull_requests": []any{},
		"workflow_run.created_at":                run.CreatedAt.UTC().Format(time.RFC3339),
		"workflow_run.head_repository.full_name": apptest.Repo, "workflow_run.repository.full_name": apptest.Repo,
		"workflow_run.actor": bot, "workflow_run.triggering_actor": bot, "sender": bot,
		"workflow_run.html_url": fmt.Sprintf("https://github.com/%s/actions/runs/%d", apptest.Repo, run.ID),
		"installation.id":       apptest.Installation,
	})
	r.mustAccept(apptest.Delivery{Event: "workflow_run", ID: apptest.NewDeliveryID(), Body: body})
	st = waitStep(t, g, n, "research")
	if done := st.Completed[len(st.Completed)-1]; done.Slug != "problem" || !strings.HasSuffix(done.Outcome, fmt.Sprintf("/actions/runs/%d", run.ID)) {
		t.Errorf("completed row = %+v", done)
	}
}
