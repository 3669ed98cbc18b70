package reconcile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/state"
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

// countingNode records every call the carrier makes into the engine's
// node: the crossings between reconcile and the engine.
type countingNode struct {
	engineNode
	calls *[]string
}

func (c countingNode) Step(ev any, now time.Time) error {
	*c.calls = append(*c.calls, fmt.Sprintf("Step(%T)", ev))
	return c.engineNode.Step(ev, now)
}

func (c countingNode) Ready(in pass.Input) (pass.Ready, error) {
	*c.calls = append(*c.calls, "Ready")
	return c.engineNode.Ready(in)
}

func (c countingNode) Advance(rd pass.Ready) {
	*c.calls = append(*c.calls, "Advance")
	c.engineNode.Advance(rd)
}

func (c countingNode) Decision() string {
	*c.calls = append(*c.calls, "Decision")
	return c.engineNode.Decision()
}

// State reads are counted apart: reads of the state as the events left
// it, which the carrier's gathering of facts makes.
func (c countingNode) State() *state.State {
	*c.calls = append(*c.calls, "State")
	return c.engineNode.State()
}

// TestOneAnswerPassCrossesOnlyByStepReadyAdvance pins the crossings of one
// issue_comment answer in App mode: the events stepped in (the answer to
// the read the engine asked before the load — the author's permission,
// pass.Prefetch —, the comment, what the thread shows), then Ready/Advance rounds (the write the engine
// decided, whose outcome is stepped in; the effects; the labels) until an
// empty Ready; no callback, no edit of the state by the carrier.
func TestOneAnswerPassCrossesOnlyByStepReadyAdvance(t *testing.T) {
	w := appWorld(t)
	n := w.issue("Add CSV export")
	w.start(n)
	var calls []string
	defer func(old func(machine.Settings, *state.State, pass.Options) engineNode) { newNode = old }(newNode)
	newNode = func(set machine.Settings, st *state.State, opt pass.Options) engineNode {
		return countingNode{engineNode: pass.New(set, st, opt), calls: &calls}
	}
	w.comment(n, "devin", "/autopilot done problem understood")
	if st := w.state(n); st.Slug != "research" {
		t.Fatalf("after the answer: step %s, want research", st.Slug)
	}
	var crossings []string
	reads := 0
	for _, c := range calls {
		if c == "State" {
			reads++
			continue
		}
		crossings = append(crossings, c)
	}
	want := []string{
		"Step(events.PermsRead)", "Step(events.Comment)", "Step(pass.ThreadRead)",
		"Ready", "Step(pass.Persisted)", "Advance", // the write, before any effect
		"Ready", "Advance", // the effects (👍)
		"Ready", "Advance", // the labels
		"Ready",    // empty: the pass is over
		"Decision", // the outcome
	}
	if strings.Join(crossings, " ") != strings.Join(want, " ") {
		t.Errorf("crossings of one answer pass:\n got  %d %v\n want %d %v", len(crossings), crossings, len(want), want)
	}
	t.Logf("%d crossings besides %d reads of the state", len(crossings), reads)
}
