package reconcile

import (
	"testing"
)

// appWorld is a world configured as App mode runs the reconcile: the
// bot's comments carry the App's id and the PR check offers buttons.
func appWorld(t *testing.T) *world {
	const app = 15368
	w := newWorld(t, func(o *Options) { o.AppID, o.CheckButtons = app, true })
	w.sb.AppID = app
	return w
}

// TestCrossingsSetup is the set-up of TestCrossingsAnswer alone: an issue
// labelled and started. Measuring both with a count-mode cover profile and
// subtracting leaves what one issue_comment answer passes through
// (/work/wt/measure27).
func TestCrossingsSetup(t *testing.T) {
	w := appWorld(t)
	n := w.issue("Add CSV export")
	w.start(n)
}

// TestCrossingsAnswer: one writer's answer on a started issue, delivered
// as issue_comment in App mode, moves the step on.
func TestCrossingsAnswer(t *testing.T) {
	w := appWorld(t)
	n := w.issue("Add CSV export")
	w.start(n)
	w.comment(n, "devin", "/autopilot done problem understood")
	if st := w.state(n); st.Slug != "research" {
		t.Fatalf("after the answer: step %s, want research", st.Slug)
	}
}
