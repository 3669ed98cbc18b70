package action_test

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// closed closes the issue on the fake GitHub and returns the issues.closed
// payload GitHub sends for it.
func (r *jiraRig) closed(who string) []byte {
	r.t.Helper()
	if err := r.gh.SetIssueState(repo, r.n, "closed", false); err != nil {
		r.t.Fatal(err)
	}
	return ghtest.Mutate(r.t, ghtest.WithRepo(r.t, ghtest.Payload(r.t, "issues.closed.json"), repo), map[string]any{
		"issue.number": r.n, "issue.labels": r.labels(r.n), "issue.state": "closed",
		"sender.login": who, "sender.type": "User",
	})
}

// TestClosingTheIssueTransitionsJiraEndToEnd: with jira.transition_on_close
// the binary, run for issues.closed, moves every Jira issue of the run to
// done and records it in the state; a redelivery sends no transition again.
// Without the option, closing sends Jira nothing.
func TestClosingTheIssueTransitionsJiraEndToEnd(t *testing.T) {
	tests := []struct {
		name       string
		deployment string
		cfg        string
		wantDone   bool
	}{
		{"cloud with the option", fakejira.Cloud, "  deployment: cloud\n  transition_on_close: true\n", true},
		{"data center with the option", fakejira.DataCenter,
			"  deployment: datacenter\n  epic_link_field: customfield_10100\n  epic_name_field: customfield_10102\n  transition_on_close: true\n", true},
		{"without the option", fakejira.Cloud, "  deployment: cloud\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newJiraRig(t, tc.deployment, tc.cfg)
			r.start()
			r.say("devin", planReport)
			r.say("devin", decomposeReport)
			r.checkSynced(tc.deployment)
			before := len(r.fj.Requests())

			payload := r.closed("maria")
			r.event("issue closed", "issues", payload)
			st := r.state(r.n)
			if st.Run != state.RunStopped {
				t.Errorf("run %s after the close, want stopped", st.Run)
			}
			issues := r.fj.Issues()
			for _, is := range issues {
				if done := is.Status == "Done"; done != tc.wantDone {
					t.Errorf("Jira %s is %q", is.Key, is.Status)
				}
			}
			for _, tk := range st.Tasks {
				if tk.Done != tc.wantDone {
					t.Errorf("task %s %s: done %v in the state", tk.ID, tk.Key, tk.Done)
				}
			}
			posts := len(r.fj.RequestsTo(fakejira.EndpointDoTransition))
			want := 0
			if tc.wantDone {
				want = len(issues)
			}
			if posts != want {
				t.Errorf("%d transition POSTs, want %d", posts, want)
			}
			if !tc.wantDone {
				if q := r.jiraSince(before); len(q) != 0 {
					t.Errorf("closing without the option sent Jira %d requests", len(q))
				}
			}

			// GitHub redelivers the event: nothing is transitioned twice.
			r.event("issue closed again", "issues", payload)
			if n := len(r.fj.RequestsTo(fakejira.EndpointDoTransition)); n != posts {
				t.Errorf("the redelivery sent %d more transition POSTs", n-posts)
			}
			if t.Failed() {
				r.logJira()
				t.Log(r.stateBody())
			}
		})
	}
}
