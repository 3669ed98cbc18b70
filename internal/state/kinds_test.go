package state

import (
	"encoding/json"
	"testing"
)

func TestGateKindsForSteps(t *testing.T) {
	for _, tc := range []struct {
		kind     GateKind
		want     string
		approval bool
	}{
		{GateApproval("plan"), "approval-plan", true},
		{GateConfirm("deploy"), "confirm-deploy", false},
		{GateSkip("research"), "skip-research", false},
		{GateRollback("plan"), "rollback-plan", false},
		{GateSkillFailed, "skill-failed", false},
		{GateTrackerAuth, "jira-auth", false},
		{GateKind("approval"), "approval", false},
	} {
		if string(tc.kind) != tc.want || tc.kind.IsApproval() != tc.approval {
			t.Errorf("kind %q: want %q, approval %v (got %v)", tc.kind, tc.want, tc.approval, tc.kind.IsApproval())
		}
	}
}

func TestLedgerOutcomeRejection(t *testing.T) {
	for _, tc := range []struct {
		o      LedgerOutcome
		why    string
		reject bool
	}{
		{LedgerApplied, "", false},
		{LedgerNotCommand, "", false},
		{RejectedStale, "stale", true},
		{RejectedAlreadyDecided, "already-decided", true},
		{Rejected("not-in-flow"), "not-in-flow", true},
		{LedgerOutcome("rejected:"), "", true},
	} {
		why, ok := tc.o.Rejection()
		if why != tc.why || ok != tc.reject {
			t.Errorf("%q.Rejection() = %q, %v; want %q, %v", tc.o, why, ok, tc.why, tc.reject)
		}
	}
}

func TestKindsValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
		want bool
	}{
		{"run in-progress", RunStatus("in-progress").Valid(), true},
		{"run awaiting-decision", RunAwaitingDecision.Valid(), true},
		{"run in_progress (the step spelling)", RunStatus("in_progress").Valid(), false},
		{"run empty", RunStatus("").Valid(), false},
		{"step not_started", StepStatus("not_started").Valid(), true},
		{"step in-progress (the run spelling)", StepStatus("in-progress").Valid(), false},
		{"sync local", SyncState("local").Valid(), true},
		{"sync done", SyncState("done").Valid(), false},
		{"tracker github", Tracker("github").Valid(), true},
		{"tracker empty", Tracker("").Valid(), false},
		{"tracker Jira (case)", Tracker("Jira").Valid(), false},
	} {
		if tc.ok != tc.want {
			t.Errorf("%s: valid = %v, want %v", tc.name, tc.ok, tc.want)
		}
	}
	if tr, ok := ParseTracker("jira"); !ok || tr != TrackerJira {
		t.Errorf("ParseTracker(jira) = %q, %v", tr, ok)
	}
	if _, ok := ParseTracker("subissues"); ok {
		t.Error("ParseTracker(subissues) accepted")
	}
}

// TestKindsDecodeAsBefore: the named kinds decode from the machine block's
// JSON exactly as the strings did, and Valid accepts and refuses the same
// values (the schema is unchanged).
func TestKindsDecodeAsBefore(t *testing.T) {
	for _, tc := range []struct {
		name, js, field string
	}{
		{"known values", `{"run":"awaiting-decision","status":"in_progress","tracker_in_use":"github","gate":{"kind":"approval-plan"},"ledger":[{"id":1,"o":"rejected:stale"}],"stop":{"reason":"spiral","resume":"in-progress"}}`, ""},
		{"unknown run", `{"run":"paused"}`, "run"},
		{"unknown tracker", `{"tracker_in_use":"gitlab"}`, "tracker_in_use"},
		{"unknown resume", `{"stop":{"reason":"spiral","resume":"paused"}}`, "stop"},
		{"unknown sync", `{"tasks":[{"id":"01","kind":"task","title":"t","idem_key":"k","sync":"done"}]}`, "tasks[0].sync"},
	} {
		s := State{Flow: "f", Slug: "s", Cycle: 1, Status: InProgress, Run: RunInProgress}
		if err := json.Unmarshal([]byte(tc.js), &s); err != nil {
			t.Fatalf("%s: decode: %v", tc.name, err)
		}
		var bad *FieldError
		for _, check := range []func(*State) error{validCurrent, validTasks, validRest} {
			if err := check(&s); err != nil {
				bad, _ = err.(*FieldError)
				break
			}
		}
		switch {
		case tc.field == "" && bad != nil:
			t.Errorf("%s: refused: %v", tc.name, bad)
		case tc.field != "" && (bad == nil || bad.Field != tc.field):
			t.Errorf("%s: got %v, want a refusal of %s", tc.name, bad, tc.field)
		}
	}
}

// Task kinds are a named type: Task.Kind holds one, and only the two are
// valid.
func TestTaskKindsAreTyped(t *testing.T) {
	for _, k := range []TaskKind{KindEpic, KindTask} {
		task := Task{Kind: k}
		if !taskKinds[task.Kind] {
			t.Errorf("%s is not a valid task kind", k)
		}
	}
	if taskKinds[TaskKind("story")] {
		t.Error("story is a valid task kind")
	}
}
