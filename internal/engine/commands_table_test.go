package engine

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/grammar"
)

// The command table is the single source: every row parses to itself,
// has a handler, and ReadOnly and the agents' allow-list are its flags.
func TestCommandTableDrivesParseReadOnlyAndAgents(t *testing.T) {
	if len(Grammar().Names()) != len(commands) {
		t.Fatalf("grammar has %d commands, table %d", len(Grammar().Names()), len(commands))
	}
	for _, c := range commands {
		if c.handle == nil {
			t.Errorf("%s has no handler", c.Name)
		}
		line := "/autopilot " + c.Name + " " + sampleArgs(c.Spec)
		r := Parse(line)
		if r.Cmd != c.Name || r.Attempt {
			t.Errorf("Parse(%q) = %+v, want command %s", line, r, c.Name)
			continue
		}
		if c.Letter != (r.Kind == grammar.Choice) {
			t.Errorf("Parse(%q) kind %v", line, r.Kind)
		}
		if got := ReadOnly(line); got != c.readOnly {
			t.Errorf("ReadOnly(%q) = %v, table says %v", line, got, c.readOnly)
		}
		if got := agentMay(r); got != c.agents {
			t.Errorf("agentMay(%s) = %v, table says %v", c.Name, got, c.agents)
		}
		if got := DeclaresTasks(r); got != c.declares {
			t.Errorf("DeclaresTasks(%s) = %v, table says %v", c.Name, got, c.declares)
		}
	}
}

// sampleArgs returns arguments that satisfy a spec's grammar.
func sampleArgs(s grammar.Spec) string {
	switch {
	case s.Letter:
		return "A"
	case s.Phase:
		return "1 step-name detail"
	case s.Slug:
		return "critic some words"
	case s.NeedText:
		return "some words"
	}
	return ""
}
