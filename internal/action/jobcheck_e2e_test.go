package action_test

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestPRCheckWorkflowJobCannotStandInForTheGate runs the Action binary as
// the step of a workflow job whose own check run GitHub attaches to the PR
// head after the run. A job named like the check (its id, GITHUB_JOB, or
// its name:) would leave a green `autopilot` check newest on a head whose
// gate has not passed; the binary refuses such a run with a configuration
// error that names the job and the check, so the job's check is red; once
// the job is renamed the next run goes ahead. A job named otherwise runs
// as usual and leaves the bot's check the newest of its name.
func TestPRCheckWorkflowJobCannotStandInForTheGate(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  fakegithub.WorkflowJob
		code int
		says []string
	}{
		{"job id is the check name", fakegithub.WorkflowJob{ID: "autopilot"}, 2, []string{`job "autopilot"`, `check "autopilot"`, "check_name"}},
		{"job name is the check name", fakegithub.WorkflowJob{ID: "gate", Name: "autopilot"}, 2, []string{`"autopilot"`, "autopilot did not write", "check_name"}},
		{"job named apart", fakegithub.WorkflowJob{ID: "run-autopilot"}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newExecRig(t, reviewLoopCfg)
			r.begin()
			var pr int
			r.reviewLoopTo("code-review", &pr, headSHA)
			if err := r.gh.SetWorkflowJob(repo, tc.job); err != nil {
				t.Fatal(err)
			}
			// A pass that changes nothing: the bot writes no new check.
			res := r.run("pull_request", r.prPayload("pull_request.synchronize.json", pr, headSHA), r.env...)
			c, ok := r.lastCheck(headSHA)
			if !ok || c.Conclusion == "success" {
				t.Fatalf("newest autopilot check on the head = %s/%s by app %d (external id %q): the gate has not passed", c.Status, c.Conclusion, c.AppID, c.ExternalID)
			}
			if res.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", res.code, tc.code, res.stdout)
			}
			for _, s := range tc.says {
				if !strings.Contains(res.stdout, s) {
					t.Errorf("output does not say %q:\n%s", s, res.stdout)
				}
			}
			t.Logf("output:\n%s", res.stdout)
			r.wantAt("still at code review", "code-review", state.RunInProgress)
			if tc.code == 0 && (c.ExternalID != "autopilot#1" || c.Status != "in_progress") {
				t.Errorf("newest autopilot check = %+v, want the bot's, in progress", c)
			}
			if tc.code == 0 {
				return
			}
			// The job renamed: the refused run's failed check stays on the
			// head but cannot pass, so the next run goes ahead.
			if err := r.gh.SetWorkflowJob(repo, fakegithub.WorkflowJob{ID: "run-autopilot"}); err != nil {
				t.Fatal(err)
			}
			r.event("after the rename", "pull_request", r.prPayload("pull_request.synchronize.json", pr, headSHA))
			if c, _ := r.lastCheck(headSHA); c.Conclusion == "success" {
				t.Errorf("after the rename the newest autopilot check is %+v", c)
			}
		})
	}
}

// callKinds names the API calls the last binary run made, in order
// ("GET contents, GET check-runs").
func (r *execRig) callKinds() string {
	var out []string
	for _, q := range r.gh.Requests()[r.starts[len(r.starts)-1]:] {
		parts := strings.Split(strings.Trim(q.Path, "/"), "/")
		kind := q.Method
		if len(parts) > 3 {
			kind += " " + parts[len(parts)-1]
			if parts[3] == "contents" {
				kind = q.Method + " contents"
			}
		}
		out = append(out, kind)
	}
	return strings.Join(out, ", ")
}
