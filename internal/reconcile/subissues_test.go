package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker/subissues"
)

// tracker: github end to end on the sandbox forge: the declared tasks become
// sub-issues of the autopilot issue, the state shows #n links, a closed task
// issue ticks its task at the next pass, and close_children closes the
// open ones when the autopilot issue closes.
func TestTrackerGitHubTasksBecomeSubIssues(t *testing.T) {
	w := newWorld(t, nil)
	w.sb.SetFile(".github/autopilot.yml", []byte("default_flow: greenfield\ntracker: github\nclose_children: true\n"))
	n := w.issue("Add CSV export")
	w.start(n)
	w.toGate(n)
	st := w.state(n)
	if len(st.Tasks) != 2 {
		t.Fatalf("%d tasks, want 2", len(st.Tasks))
	}
	kids := w.sb.SubIssueNumbers(n)
	if len(kids) != 2 {
		t.Fatalf("#%d has sub-issues %v, want 2", n, kids)
	}
	for i, tk := range st.Tasks {
		if tk.Sync != state.SyncCreated || !subissues.IsKey(tk.Key) {
			t.Fatalf("task %s: %s %q, want created as #n", tk.ID, tk.Sync, tk.Key)
		}
		is, _ := w.sb.Snapshot(kids[i])
		if !strings.Contains(is.Body, "<!-- autopilot:task "+tk.IdemKey) || !is.HasLabel(subissues.TaskLabel) {
			t.Errorf("#%d lacks its marker or label: %q %v", kids[i], is.Body, is.Labels)
		}
	}
	if sc := w.stateComment(n); !strings.Contains(sc.Body, "["+st.Tasks[0].Key+"](") {
		t.Errorf("the Tasks section does not link %s", st.Tasks[0].Key)
	}

	// A person closes the first task's issue: the sweep ticks it.
	first := kids[0]
	w.sb.CloseIssue(first)
	w.tick(time.Hour)
	w.sweep()
	if st := w.state(n); !st.Tasks[0].Done || st.Tasks[1].Done {
		t.Fatalf("after closing #%d: done %v %v, want true false", first, st.Tasks[0].Done, st.Tasks[1].Done)
	}

	// Closing the autopilot issue closes the other task issue.
	ev := w.event("issues", "closed", n, "maria")
	ev.IssueState = "closed"
	w.sb.CloseIssue(n)
	w.mustHandle(ev)
	if is, _ := w.sb.Snapshot(kids[1]); is.State != "closed" {
		t.Errorf("close_children: #%d is %s, want closed", kids[1], is.State)
	}
}

// Answering C at the Jira authentication gate moves the run's tasks to
// GitHub sub-issues, whatever the config says, and records the decision.
func TestJiraGateAnswerCCreatesSubIssuesInstead(t *testing.T) {
	jw := newJiraWorld(t, "  project: PROJ\n")
	jw.tr.SetAuth(false)
	n := jw.issue("Add CSV export")
	jw.start(n)
	jw.comment(n, "devin", "/autopilot done problem finished")
	jw.comment(n, "devin", "/autopilot done research finished")
	st := jw.state(n)
	if st.Gate == nil || st.Gate.Kind != "jira-auth" {
		t.Fatalf("no Jira gate: %+v", st.Gate)
	}
	jw.comment(n, "maria", "C")
	st = jw.state(n)
	if st.Tracker != "github" || len(st.Decisions) == 0 || st.Decisions[len(st.Decisions)-1].Option != "C" {
		t.Fatalf("after C: tracker %q, decisions %+v", st.Tracker, st.Decisions)
	}
	jw.comment(n, "devin", "/autopilot done plan finished")
	jw.comment(n, "devin", decompose)
	st = jw.state(n)
	kids := jw.sb.SubIssueNumbers(n)
	if len(st.Tasks) != 2 || len(kids) != 2 {
		t.Fatalf("tasks %d, sub-issues %v: want 2 and 2", len(st.Tasks), kids)
	}
	for _, tk := range st.Tasks {
		if !subissues.IsKey(tk.Key) {
			t.Errorf("task %s has key %q, want #n", tk.ID, tk.Key)
		}
	}
	if got := len(jw.tr.Issues()); got != 0 {
		t.Errorf("Jira holds %d issues, want 0", got)
	}
}
