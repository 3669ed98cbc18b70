package model

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

// FuzzBuild: whatever the gate and the deciders say, Build does not panic
// and names only GitHub logins as the people a decision waits for.
func FuzzBuild(f *testing.F) {
	f.Add("DECISION REQUIRED: ask @alice", "ping @org/team and @bob-1", "octocat", "answer_permission: maintain\n")
	f.Add("", "@@@", `"><img>`, "answer_permission: root")
	f.Fuzz(func(t *testing.T, title, detail, by, config string) {
		s := statetest.Sample()
		s.Run = state.RunAwaitingDecision
		s.Gate.Title, s.Gate.Details, s.Decisions[0].By, s.ConfigYAML = title, []string{detail}, by, config
		r, ok := Build(Pass{Listed: true, State: s})
		if !ok || r.Wait == nil {
			t.Fatal("no decision wait")
		}
		for _, l := range r.Wait.From {
			if !loginShape.MatchString(l) {
				t.Fatalf("from %q is no login", l)
			}
		}
		switch r.Wait.Who {
		case "anyone with triage access", "anyone with write access", "anyone with maintain access", "anyone with admin access":
		default:
			t.Fatalf("who = %q", r.Wait.Who)
		}
	})
}
