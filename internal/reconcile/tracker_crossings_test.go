package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// opNode records, besides the crossings, the tracker op each Ready hands
// out and whether its Persist is the sync's claim.
type opNode struct {
	countingNode
}

func (o opNode) Ready(in pass.Input) (pass.Ready, error) {
	rd, err := o.countingNode.Ready(in)
	switch {
	case rd.Tracker != nil:
		*o.calls = append(*o.calls, fmt.Sprintf("op:%T", rd.Tracker.Op))
	case rd.Claim:
		*o.calls = append(*o.calls, "claim")
	}
	return rd, err
}

// TestATrackerSyncCrossesOnlyByReadyStepAdvance: the answer that declares
// tasks, with Jira, syncs them inside the pass through Ready/Advance
// rounds alone: each tracker op is handed out by a Ready and its answer
// stepped in (pass.TrackerOutcome), the claim is a Ready's Persist whose
// outcome is stepped in before the create is handed out, and no query
// asks the carrier to run the sync itself.
func TestATrackerSyncCrossesOnlyByReadyStepAdvance(t *testing.T) {
	jw := newJiraWorld(t, "")
	n := jw.issue("Add CSV export")
	jw.start(n)
	for _, s := range []string{"problem", "research", "plan"} {
		jw.comment(n, "devin", "/autopilot done "+s+" finished")
	}
	var calls []string
	defer func(old func(machine.Settings, *state.State, pass.Options) engineNode) { newNode = old }(newNode)
	newNode = func(set machine.Settings, st *state.State, opt pass.Options) engineNode {
		return opNode{countingNode{engineNode: pass.New(set, st, opt), calls: &calls}}
	}
	jw.comment(n, "devin", decompose)
	if got := len(jw.tr.Issues()); got != 2 {
		t.Fatalf("%d Jira issues, want 2", got)
	}
	var rounds []string
	for _, c := range calls {
		if c != "State" {
			rounds = append(rounds, c)
		}
	}
	got := strings.Join(rounds, " ")
	t.Logf("%d crossings (op: and claim mark what a Ready held): %s", len(rounds)-strings.Count(got, "op:")-strings.Count(got, "claim"), got)
	for _, want := range []string{
		"Ready op:tasksync.Lookup Step(pass.TrackerOutcome) Advance",
		"Ready claim Step(pass.Persisted) Advance Ready op:tasksync.Create Step(pass.TrackerOutcome) Advance",
		"Ready op:tasksync.Recall Step(pass.TrackerOutcome) Advance",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("crossings lack %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "op:") != strings.Count(got, "Step(pass.TrackerOutcome)") {
		t.Errorf("an op without its answer (or the other way round):\n%s", got)
	}
	for _, c := range rounds {
		if strings.HasPrefix(c, "Step(") && c != "Step(pass.TrackerOutcome)" && c != "Step(pass.Persisted)" &&
			c != "Step(pass.ThreadRead)" && c != "Step(events.Comment)" && c != "Step(events.TrackerAuth)" &&
			c != "Step(events.PermsRead)" { // the permission read before the comment (the prefetch), as in one answer
			t.Errorf("carrier stepped %s during the sync pass:\n%s", c, got)
		}
	}
}

// TestADryRunPreviewsTheTrackerSync: a dry run answers the sync's first op
// with a preview (pass.TrackerOutcome Previewed): it says what it would
// sync and sends nothing to the tracker.
func TestADryRunPreviewsTheTrackerSync(t *testing.T) {
	jw := newJiraWorld(t, "")
	n := jw.issue("Add CSV export")
	jw.start(n)
	for _, s := range []string{"problem", "research", "plan"} {
		jw.comment(n, "devin", "/autopilot done "+s+" finished")
	}
	before := len(jw.tr.Calls())
	var printed []string
	dry := jw.recOn(jw.sb, func(o *Options) {
		o.Tracker, o.DryRun = jw.tr, true
		o.Print = func(s string) { printed = append(printed, s) }
	})
	c := jw.say(n, "devin", decompose)
	if _, err := dry.Handle(context.Background(), jw.commentEvent(c)); err != nil {
		t.Fatal(err)
	}
	if calls := jw.tr.Calls(); len(calls) != before {
		t.Errorf("a dry run sent tracker calls: %+v", calls[before:])
	}
	if !slices.Contains(printed, "dry-run: would sync 2 task(s) with Jira") {
		t.Errorf("printed %q, want the sync previewed", printed)
	}
}
