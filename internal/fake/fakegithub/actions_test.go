package fakegithub

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
)

func TestWorkflowDispatchAnswers(t *testing.T) {
	tests := []struct {
		name       string
		legacy     bool
		body       string
		wantStatus int
		wantRun    bool
		wantMsg    string
	}{
		{"run details requested", false, `{"ref":"main","inputs":{"session":"s-42"},"return_run_details":true}`, 200, true, ""},
		{"run details off", false, `{"ref":"main","inputs":{"session":"s-42"},"return_run_details":false}`, 204, true, ""},
		{"no flag", false, `{"ref":"main","inputs":{"session":"s-42"}}`, 204, true, ""},
		{"legacy GHES rejects the flag", true, `{"ref":"main","inputs":{"session":"s-42"},"return_run_details":true}`, 422, false, "return_run_details"},
		{"legacy GHES without the flag", true, `{"ref":"main","inputs":{"session":"s-42"}}`, 204, true, ""},
		{"missing ref", false, `{"inputs":{}}`, 422, false, `"ref" wasn't supplied`},
		{"unknown ref", false, `{"ref":"nope"}`, 422, false, "No ref found for: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.s.SetLegacyDispatch(tt.legacy)
			var out map[string]any
			resp := e.doJSON("POST", "/repos/octo/repo/actions/workflows/autopilot.yml/dispatches", humanTok, tt.body, &out)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d (%v), want %d", resp.StatusCode, out, tt.wantStatus)
			}
			runs := e.s.Runs(testRepo)
			if tt.wantRun != (len(runs) == 1) {
				t.Fatalf("runs %+v, want run created: %v", runs, tt.wantRun)
			}
			if tt.wantMsg != "" && !strings.Contains(fmt.Sprint(out["message"]), tt.wantMsg) {
				t.Fatalf("message %q, want it to name %q", out["message"], tt.wantMsg)
			}
			if tt.wantStatus != 200 {
				return
			}
			id := runs[0].ID
			if out["workflow_run_id"] != float64(id) ||
				out["run_url"] != fmt.Sprintf("%s/repos/octo/repo/actions/runs/%d", e.s.URL(), id) ||
				out["html_url"] != fmt.Sprintf("https://github.com/octo/repo/actions/runs/%d", id) {
				t.Fatalf("run details %v, want run %d", out, id)
			}
		})
	}
}

func TestWorkflowRunsDisplayTitleListingAndCompletion(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	gh := e.client(humanTok)
	must(t, e.s.SetWorkflow(testRepo, "custom.yml", "Custom", "run ${{ inputs.issue }} by ${{ github.actor }}"))

	for i, wf := range []string{"autopilot.yml", "autopilot.yml", "custom.yml"} {
		resp, err := gh.Actions.CreateWorkflowDispatchEventByFileName(ctx, "octo", "repo", wf, github.CreateWorkflowDispatchEventRequest{
			Ref: "main", Inputs: map[string]any{"session": fmt.Sprintf("s-%d", i), "issue": 7}})
		wantStatus(t, resp, err, http.StatusNoContent)
		e.clock.Advance(time.Minute)
	}
	runs := e.s.Runs(testRepo)
	titles := []string{runs[0].DisplayTitle, runs[1].DisplayTitle, runs[2].DisplayTitle}
	if fmt.Sprint(titles) != "[autopilot s-0 autopilot s-1 run 7 by alice]" {
		t.Fatalf("display titles %q", titles)
	}
	if runs[1].RunNumber != 2 || runs[2].RunNumber != 1 || runs[0].Inputs["session"] != "s-0" || runs[0].Actor != "alice" {
		t.Fatalf("runs %+v", runs)
	}

	list, resp, err := gh.Actions.ListWorkflowRunsByFileName(ctx, "octo", "repo", "autopilot.yml", nil)
	wantStatus(t, resp, err, http.StatusOK)
	if list.GetTotalCount() != 2 || list.WorkflowRuns[0].GetID() != runs[1].ID {
		t.Fatalf("list %d runs, first %d; want 2, newest first", list.GetTotalCount(), list.WorkflowRuns[0].GetID())
	}
	r := list.WorkflowRuns[0]
	if r.GetDisplayTitle() != "autopilot s-1" || r.GetEvent() != "workflow_dispatch" || r.GetStatus() != "queued" ||
		r.GetHeadBranch() != "main" || runs[1].Workflow != ".github/workflows/autopilot.yml" {
		t.Fatalf("run %+v", r)
	}
	// A dispatched run's head is the repository itself (a fork's PR run
	// names the fork here).
	if r.GetHeadRepository().GetFullName() != testRepo || r.GetRepository().GetFullName() != testRepo {
		t.Fatalf("head repository %q, repository %q, want %s", r.GetHeadRepository().GetFullName(), r.GetRepository().GetFullName(), testRepo)
	}
	since := epoch.Add(time.Minute).Format(time.RFC3339)
	list, _, err = gh.Actions.ListWorkflowRunsByFileName(ctx, "octo", "repo", "autopilot.yml", &github.ListWorkflowRunsOptions{Created: ">=" + since})
	must(t, err)
	if list.GetTotalCount() != 1 {
		t.Fatalf("created>=%s matched %d runs, want 1", since, list.GetTotalCount())
	}

	must(t, e.s.CompleteRun(runs[0].ID, "success"))
	got, resp, err := gh.Actions.GetWorkflowRunByID(ctx, "octo", "repo", runs[0].ID)
	wantStatus(t, resp, err, http.StatusOK)
	if got.GetStatus() != "completed" || got.GetConclusion() != "success" {
		t.Fatalf("completed run %s/%s", got.GetStatus(), got.GetConclusion())
	}
	list, _, err = gh.Actions.ListWorkflowRunsByFileName(ctx, "octo", "repo", "autopilot.yml", &github.ListWorkflowRunsOptions{Status: "queued"})
	must(t, err)
	if list.GetTotalCount() != 1 {
		t.Fatalf("status=queued matched %d, want 1", list.GetTotalCount())
	}
	_, resp, err = gh.Actions.GetWorkflowRunByID(ctx, "octo", "repo", 1)
	wantStatus(t, resp, err, http.StatusNotFound)
}

// A run a fork's pull request started lists with event pull_request, the
// fork as head_repository and the title the fork chose; the event filter
// tells it from dispatched runs.
func TestForkRunListsWithItsEventAndHead(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	gh := e.client(humanTok)
	resp, err := gh.Actions.CreateWorkflowDispatchEventByFileName(ctx, "octo", "repo", "autopilot.yml", github.CreateWorkflowDispatchEventRequest{
		Ref: "main", Inputs: map[string]any{"session": "s-1"}})
	wantStatus(t, resp, err, http.StatusNoContent)
	id, err := e.s.AddForkRun(testRepo, "autopilot.yml", "randy/repo", "autopilot s-1", "bbbbbbb")
	must(t, err)
	list, resp, err := gh.Actions.ListWorkflowRunsByFileName(ctx, "octo", "repo", "autopilot.yml", nil)
	wantStatus(t, resp, err, http.StatusOK)
	if list.GetTotalCount() != 2 {
		t.Fatalf("%d runs, want 2", list.GetTotalCount())
	}
	r := list.WorkflowRuns[0]
	if r.GetID() != id || r.GetEvent() != "pull_request" || r.GetDisplayTitle() != "autopilot s-1" ||
		r.GetHeadRepository().GetFullName() != "randy/repo" || !r.GetHeadRepository().GetFork() ||
		r.GetRepository().GetFullName() != testRepo || r.GetWorkflowID() != list.WorkflowRuns[1].GetWorkflowID() {
		t.Fatalf("fork run %+v", r)
	}
	if d := list.WorkflowRuns[1]; d.GetEvent() != "workflow_dispatch" || d.GetHeadRepository().GetFullName() != testRepo {
		t.Fatalf("dispatched run event %s head %s", d.GetEvent(), d.GetHeadRepository().GetFullName())
	}
	list, _, err = gh.Actions.ListWorkflowRunsByFileName(ctx, "octo", "repo", "autopilot.yml", &github.ListWorkflowRunsOptions{Event: "workflow_dispatch"})
	must(t, err)
	if list.GetTotalCount() != 1 || list.WorkflowRuns[0].GetID() == id {
		t.Fatalf("event=workflow_dispatch matched %d runs", list.GetTotalCount())
	}
}
