package fakegithub

import (
	"context"
	"testing"

	"github.com/google/go-github/v60/github"
)

// TestJobCheckRunAttachedAfterTheRun: a world with a workflow job gives a
// pull_request run the job's check run, in progress while the job runs
// (listed through the API as GitHub Actions', with no autopilot
// external_id), completed after it with the step's exit status and then
// the newest of its name on the PR head, after a check run the job's step
// wrote itself. Its name is the job's name:, else its id; a world without
// a job, and an event on no PR head, get none.
func TestJobCheckRunAttachedAfterTheRun(t *testing.T) {
	e := newEnv(t)
	e.s.AddActionsToken("ghs_actions", testRepo)
	gh := e.client("ghs_actions")
	ctx := context.Background()
	payload := []byte(`{"pull_request": {"head": {"sha": "` + headSHA + `"}}}`)

	if _, ok, err := e.s.JobStarted(testRepo, "pull_request", payload); err != nil || ok {
		t.Fatalf("a world without a job: ok %v, err %v", ok, err)
	}
	must(t, e.s.SetWorkflowJob(testRepo, WorkflowJob{ID: "autopilot"}))
	run, ok, err := e.s.JobStarted(testRepo, "pull_request", payload)
	if err != nil || !ok || run.CheckRun == 0 || run.HeadSHA != headSHA {
		t.Fatalf("JobStarted = %+v, %v, %v", run, ok, err)
	}
	list, _, err := gh.Checks.ListCheckRunsForRef(ctx, "octo", "repo", headSHA, &github.ListCheckRunsOptions{CheckName: github.String("autopilot")})
	if err != nil || list.GetTotal() != 1 {
		t.Fatalf("list while the job runs: %v, %d runs", err, list.GetTotal())
	}
	job := list.CheckRuns[0]
	if job.GetStatus() != "in_progress" || job.GetApp().GetID() != ActionsAppID || job.GetExternalID() == "" || job.GetExternalID() == "autopilot#1" {
		t.Errorf("job's check while it runs = %s, app %d, external id %q", job.GetStatus(), job.GetApp().GetID(), job.GetExternalID())
	}
	// The step writes its own check run of the same name, then exits 0.
	if _, _, err := gh.Checks.CreateCheckRun(ctx, "octo", "repo", github.CreateCheckRunOptions{Name: "autopilot", HeadSHA: headSHA,
		Status: github.String("in_progress"), ExternalID: github.String("autopilot#1")}); err != nil {
		t.Fatal(err)
	}
	must(t, e.s.JobFinished(testRepo, run, 0))
	runs := e.s.CheckRuns(testRepo, headSHA)
	if len(runs) != 2 {
		t.Fatalf("%d check runs, want the step's and the job's", len(runs))
	}
	if last := runs[len(runs)-1]; last.ID != run.CheckRun || last.Status != "completed" || last.Conclusion != "success" || last.CompletedAt.IsZero() {
		t.Errorf("newest check run = %+v, want the job's, completed/success", last)
	}
	list, _, _ = gh.Checks.ListCheckRunsForRef(ctx, "octo", "repo", headSHA, nil)
	if list.CheckRuns[0].GetID() != run.CheckRun {
		t.Errorf("the API lists %d first, want the job's %d (newest first)", list.CheckRuns[0].GetID(), run.CheckRun)
	}

	// A failing step fails the job's check; a named job's check carries
	// its name; a merge queue's run lands on the queue's commit.
	must(t, e.s.SetWorkflowJob(testRepo, WorkflowJob{ID: "gate", Name: "autopilot"}))
	const queued = "9999999999999999999999999999999999999999"
	run, _, _ = e.s.JobStarted(testRepo, "merge_group", []byte(`{"merge_group": {"head_sha": "`+queued+`"}}`))
	must(t, e.s.JobFinished(testRepo, run, 2))
	if got := e.s.CheckRuns(testRepo, queued); len(got) != 1 || got[0].Name != "autopilot" || got[0].Conclusion != "failure" {
		t.Errorf("merge queue job check = %+v, want one autopilot failure", got)
	}
	// An issue comment runs on the default branch's head: no check here.
	run, ok, err = e.s.JobStarted(testRepo, "issue_comment", []byte(`{"issue": {"number": 1}}`))
	if err != nil || !ok || run.CheckRun != 0 {
		t.Errorf("issue_comment job run = %+v, %v, %v", run, ok, err)
	}
	must(t, e.s.JobFinished(testRepo, run, 0))
}
