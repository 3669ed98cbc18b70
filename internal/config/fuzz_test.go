package config

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/flow"
)

// FuzzParse: Parse never panics, answers the same way twice, every refusal
// is a *Error naming a field, and every accepted config has clamped limits,
// a valid default flow, valid flows and usable executors.
func FuzzParse(f *testing.F) {
	full, err := os.ReadFile("testdata/full.yml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	for _, s := range []string{
		"",
		"# only a comment\n",
		"limits: {max_sessions: 500, max_hours: .nan, confidence_threshold: -1}\nmax_iterations: 0\n",
		"limits:\n\tmax_sessions: 3\n",
		"default_flow: hotfix\nflows:\n  hotfix:\n    loop: {to: a}\n    steps:\n      - {slug: a, name: A, return_to: a}\n",
		"executor: {kind: comment, agent: claude}\nsteps: {plan: {kind: dispatch}}\n",
		"roles: {architect: ['@ada', x/y]}\nagents: [a, '']\n",
		"a: &a [*a, *a]\nb: *a\n",
		"version: 1\n---\nversion: 2\n",
		"jira: {deployment: cloud, search_lag: 1h, task_files: ../x, points_field: customfield_1}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		_, err2 := Parse(data)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("Parse is not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *config.Error", err, err)
			}
			if ce.Field == "" || ce.Msg == "" || ce.Line < 0 {
				t.Fatalf("error without field or message: %#v", ce)
			}
			text, _ := utf8Text(data)
			if lines := len(splitLines(text)); ce.Line > lines {
				t.Fatalf("error names line %d of a %d-line file: %v", ce.Line, lines, err)
			}
			return
		}
		checkAccepted(t, c)
	})
}

// checkAccepted asserts the invariants of every config Parse accepts.
func checkAccepted(t *testing.T, c *Config) {
	t.Helper()
	l := c.Limits
	if l.MaxSessions < 1 || l.MaxSessions > 50 {
		t.Fatalf("max_sessions %d outside 1..50", l.MaxSessions)
	}
	if math.IsNaN(l.MaxHours) || l.MaxHours < 0.5 || l.MaxHours > 24 {
		t.Fatalf("max_hours %v outside 0.5..24", l.MaxHours)
	}
	if math.IsNaN(l.ConfidenceThreshold) || l.ConfidenceThreshold < 0 || l.ConfidenceThreshold > 1 {
		t.Fatalf("confidence_threshold %v outside 0..1", l.ConfidenceThreshold)
	}
	if c.MaxIterations < 1 || c.MaxIterations > 100 {
		t.Fatalf("max_iterations %d outside 1..100", c.MaxIterations)
	}
	if c.DefaultFlow != "" && c.All[c.DefaultFlow] == nil {
		t.Fatalf("default_flow %q is not a flow (have %v)", c.DefaultFlow, c.All.Names())
	}
	for _, b := range []string{"greenfield", "existing-code", "meta-repo", "review-loop"} {
		if c.All[b] == nil {
			t.Fatalf("built-in flow %s missing", b)
		}
	}
	for name, fl := range c.All {
		if fl.Name != name {
			t.Fatalf("flow %q carries name %q", name, fl.Name)
		}
		if err := fl.Validate(); err != nil {
			t.Fatalf("accepted an invalid flow: %v", err)
		}
		for _, s := range fl.Steps {
			ex := c.ExecutorFor(s.Slug)
			switch {
			case ex.Kind != flow.ExecManual && ex.Kind != flow.ExecComment && ex.Kind != flow.ExecDispatch:
				t.Fatalf("%s: executor kind %q", s.Slug, ex.Kind)
			case ex.Kind == flow.ExecDispatch && strings.TrimSpace(ex.Workflow) == "":
				t.Fatalf("%s: dispatch without a workflow", s.Slug)
			case ex.Kind == flow.ExecComment && !strings.HasPrefix(ex.Agent, "@"):
				t.Fatalf("%s: comment executor agent %q is not a mention", s.Slug, ex.Agent)
			case ex.Timeout <= 0:
				t.Fatalf("%s: timeout %v", s.Slug, ex.Timeout)
			}
		}
	}
	for slug := range c.Steps {
		known := false
		for _, fl := range c.All {
			known = known || fl.Index(slug) >= 0
		}
		if !known {
			t.Fatalf("steps.%s accepted but no flow has it", slug)
		}
	}
	for role := range c.Roles {
		if role != "architect" && role != "critic" {
			t.Fatalf("role %q accepted", role)
		}
	}
	switch c.AnswerPermission {
	case "", "triage", "write", "maintain", "admin":
	default:
		t.Fatalf("answer_permission %q accepted", c.AnswerPermission)
	}
}
