package demo

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// taskFlows are the built-in flows with steps that declare tasks.
var taskFlows = []string{"greenfield", "existing-code", "meta-repo"}

// TestDemoContradictoryTrackerFlagsAreUsageErrors: --jira means the
// sandbox Jira, so --tracker may only agree with it.
func TestDemoContradictoryTrackerFlagsAreUsageErrors(t *testing.T) {
	for _, tr := range []string{"local", "github"} {
		_, err := Run(context.Background(), Options{Jira: true, Tracker: tr, Quiet: true}, &bytes.Buffer{})
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--jira") || !strings.Contains(err.Error(), "--tracker "+tr) {
			t.Errorf("--jira --tracker %s: err = %v, want a usage error naming both", tr, err)
		}
	}
	if _, err := Run(context.Background(), Options{Jira: true, Tracker: "jira", Quiet: true}, &bytes.Buffer{}); err != nil {
		t.Errorf("--jira --tracker jira agree: %v", err)
	}
}

// TestEveryTaskFlowShowsItsTracker: in every flow that declares tasks, the
// transcript shows where they went, and each tracker looks different:
// sub-issues linked as #n, Jira keys, or tasks kept in the issue.
func TestEveryTaskFlowShowsItsTracker(t *testing.T) {
	for _, f := range taskFlows {
		seen := map[string]string{}
		for _, o := range []Options{{Flow: f}, {Flow: f, Jira: true}, {Flow: f, Tracker: "github"}, {Flow: f, Tracker: "local"}} {
			var buf bytes.Buffer
			tr, err := Run(context.Background(), o, &buf)
			if err != nil {
				t.Fatalf("%s %+v: %v", f, o, err)
			}
			out := buf.String()
			name := o.Tracker
			if o.Jira {
				name = "jira"
			}
			var want []string
			switch name {
			case "github":
				want = []string{"created sub-issue #", "— [#", "GitHub: pending ("}
			case "jira":
				want = []string{"](https://sandbox.atlassian.net/browse/REP-", "Jira: pending ("}
			default:
				want = []string{"kept here (no tracker)", "Tasks: no tracker"}
			}
			if tr.Summary.Tasks == 0 {
				t.Errorf("%s %s: the demo declares no tasks", f, name)
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("%s %s: transcript lacks %q", f, name, w)
				}
			}
			if name != "jira" && strings.Contains(out, "Jira: ") {
				t.Errorf("%s %s: transcript speaks of Jira", f, name)
			}
			_, final, _ := strings.Cut(out, "### Tasks")
			seen[name] = final
		}
		if seen["github"] == seen["jira"] || seen["github"] == seen["local"] || seen["jira"] == seen["local"] {
			t.Errorf("%s: two trackers show the same Tasks section", f)
		}
	}
}

// TestDemoDependsOnPointsAtTasks: the demo's task blocks make tasks
// depend on tasks, never on their epic.
func TestDemoDependsOnPointsAtTasks(t *testing.T) {
	for _, f := range taskFlows {
		tr, err := Run(context.Background(), Options{Flow: f, JSON: true}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := codec.Parse(tr.State, codec.Want{Repo: repo, Issue: 1, Key: []byte("demo-state-key")})
		if err != nil {
			t.Fatalf("%s: final state: %v", f, err)
		}
		kind := map[string]string{}
		for _, tk := range s.Tasks {
			kind[tk.ID], kind[tk.Title] = string(tk.Kind), string(tk.Kind)
		}
		deps := 0
		for _, tk := range s.Tasks {
			for _, d := range tk.DependsOn {
				deps++
				if kind[d] != string(state.KindTask) {
					t.Errorf("%s: task %s %q depends on %q, a %q", f, tk.ID, tk.Title, d, kind[d])
				}
			}
		}
		if deps == 0 {
			t.Errorf("%s: no task depends on another", f)
		}
	}
}
