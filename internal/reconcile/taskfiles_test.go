package reconcile

import (
	"testing"
)

// TestTaskFilesAreReadWhenTheReportHasNoBlock: with jira.task_files set, a
// decompose report without an autopilot-tasks block declares the task files
// of that directory (read through the contents API), once.
func TestTaskFilesAreReadWhenTheReportHasNoBlock(t *testing.T) {
	w := newWorld(t, nil)
	w.sb.SetFile(".github/autopilot.yml", []byte("default_flow: greenfield\njira:\n  enabled: false\n  task_files: _docs/02_tasks\n"))
	w.sb.SetFile("_docs/02_tasks/01_writer.md", []byte("# Streaming writer\n\nPoints: 3\n\nWrite rows as they come.\n"))
	w.sb.SetFile("_docs/02_tasks/02_endpoint.md", []byte("# Export endpoint\n\nDepends on: 01\nPoints: 2\n"))
	w.sb.SetFile("_docs/02_tasks/notes.txt", []byte("not a task"))
	n := w.issue("CSV export")
	w.start(n)
	for _, s := range []string{"problem", "research", "plan"} {
		w.comment(n, "devin", "/autopilot done "+s)
	}
	w.comment(n, "devin", "/autopilot done tasks are in _docs/02_tasks")
	st := w.state(n)
	if len(st.Tasks) != 2 || st.Tasks[0].Title != "Streaming writer" || st.Tasks[1].Points != 2 || st.Tasks[0].Step != "decompose" {
		t.Fatalf("tasks = %+v, want the two task files", st.Tasks)
	}
	if st.Gate == nil || st.Gate.Kind != "session-boundary" {
		t.Fatalf("after decompose: gate %+v", st.Gate)
	}
	// A later report on a Jira step does not declare the same files again.
	if st.Tasks[0].IdemKey == "" || st.Tasks[0].Sync != "pending" {
		t.Errorf("task 1 = %+v, want a pending task with an idempotency key", st.Tasks[0])
	}
}

// TestTaskFilesIgnoredOutsideJiraSteps: a done on a step that declares no
// Jira items never reads the task directory.
func TestTaskFilesIgnoredOutsideJiraSteps(t *testing.T) {
	w := newWorld(t, nil)
	w.sb.SetFile(".github/autopilot.yml", []byte("default_flow: greenfield\njira:\n  enabled: false\n  task_files: _docs/02_tasks\n"))
	w.sb.SetFile("_docs/02_tasks/01_writer.md", []byte("# Streaming writer\n"))
	n := w.issue("CSV export")
	w.start(n)
	before := w.sb.Calls()["GET contents"]
	w.comment(n, "devin", "/autopilot done problem")
	if got := w.sb.Calls()["GET contents"] - before; got != 0 {
		t.Errorf("problem step read %d contents, want 0", got)
	}
	if st := w.state(n); len(st.Tasks) != 0 {
		t.Errorf("tasks %+v, want none", st.Tasks)
	}
}
