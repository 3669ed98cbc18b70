package reconcile

import (
	"errors"
	"fmt"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
)

// TestMergeGroupMirrorsThePRCheck: a merge queue's commit gets the
// conclusion of the newest autopilot check this App made on the queued
// PR's head; a check of that name by another App, an older success, or
// none at all leaves the queue's check failing.
func TestMergeGroupMirrorsThePRCheck(t *testing.T) {
	const app = 4242
	tests := []struct {
		name   string
		checks []forge.Check
		want   string
	}{
		{"none", nil, "failure"},
		{"newest is success", []forge.Check{{ID: 1, Name: "autopilot", Status: "in_progress", AppID: app}, {ID: 2, Name: "autopilot", Status: "completed", Conclusion: "success", AppID: app}}, "success"},
		{"newest waits for a decision", []forge.Check{{ID: 3, Name: "autopilot", Status: "completed", Conclusion: "action_required", AppID: app}, {ID: 2, Name: "autopilot", Status: "completed", Conclusion: "success", AppID: app}}, "failure"},
		{"another App's success", []forge.Check{{ID: 5, Name: "autopilot", Status: "completed", Conclusion: "success", AppID: 99}}, "failure"},
		{"another check's success", []forge.Check{{ID: 5, Name: "build", Status: "completed", Conclusion: "success", AppID: app}}, "failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, func(o *Options) { o.AppID = app })
			pr := w.sb.CreatePull("devin", "impl", "Fixes #1", "abc123")
			w.sb.SetChecks("abc123", tt.checks...)
			ev := &ghevent.Event{Name: "merge_group", Action: "checks_requested", Repo: testRepo, Sender: w.sb.User("maria"), Handled: true,
				MergeGroup: &ghevent.MergeGroup{HeadSHA: "queue1", PR: pr.Number}}
			w.mustHandle(ev)
			got := w.sb.CreatedCheckRuns("queue1")
			if len(got) != 1 || got[0].Conclusion != tt.want || got[0].Name != "autopilot" || got[0].Status != "completed" {
				t.Fatalf("queue check runs = %+v, want one completed/%s", got, tt.want)
			}
			// A queue entry for a PR the ref does not name writes nothing.
			ev.MergeGroup = &ghevent.MergeGroup{HeadSHA: "queue2"}
			w.mustHandle(ev)
			if n := len(w.sb.CreatedCheckRuns("queue2")); n != 0 {
				t.Errorf("%d check runs for a queue entry naming no PR", n)
			}
		})
	}
}

// TestPRCheckPromiseSurvivesAFailedCreate: GitHub failing the create (502)
// leaves the check pending in the state, and the next pass, though nothing
// else changed, creates it exactly once and clears the mark. Later passes
// create none.
func TestPRCheckPromiseSurvivesAFailedCreate(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	w.sb.FailNext("POST check-run", &forge.TransientError{Status: 502, Err: errors.New("bad gateway")})
	w.linkPR(n, fmt.Sprintf("Fixes #%d", n))
	if got := w.sb.CreatedCheckRuns("abc123"); len(got) != 0 {
		t.Fatalf("check runs after a failed create: %+v", got)
	}
	st := w.state(n)
	if len(st.PRChecks) != 1 || !st.PRChecks[0].Pending || st.PRChecks[0].Shown == "" {
		t.Fatalf("pr_checks after a failed create = %+v, want one pending promise", st.PRChecks)
	}
	w.sweep()
	got := w.sb.CreatedCheckRuns("abc123")
	if len(got) != 1 || got[0].Name != "autopilot" {
		t.Fatalf("check runs after the next pass = %+v, want exactly one", got)
	}
	if st := w.state(n); st.PRChecks[0].Pending {
		t.Errorf("the pending mark stayed after the create: %+v", st.PRChecks)
	}
	w.sweep()
	if got := w.sb.CreatedCheckRuns("abc123"); len(got) != 1 {
		t.Errorf("%d check runs after a pass that changed nothing, want 1", len(got))
	}
}
