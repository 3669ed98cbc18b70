package flow

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// builtins decodes builtin.yml the way config does (unknown keys refused).
func builtins(t *testing.T) map[string]*Flow {
	t.Helper()
	var raw map[string]Flow
	dec := yaml.NewDecoder(bytes.NewReader(BuiltinSource()))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("builtin.yml does not decode: %v", err)
	}
	out := map[string]*Flow{}
	for name, f := range raw {
		f := f
		f.Name = name
		out[name] = &f
	}
	return out
}

func slugs(f *Flow) []string {
	var out []string
	for _, s := range f.Steps {
		out = append(out, s.Slug)
	}
	return out
}

// where returns the slugs of the steps for which pred holds.
func where(f *Flow, pred func(Step) bool) []string {
	var out []string
	for _, s := range f.Steps {
		if pred(s) {
			out = append(out, s.Slug)
		}
	}
	return out
}

func TestBuiltinFlowsAreValid(t *testing.T) {
	fs := builtins(t)
	want := []string{"existing-code", "greenfield", "meta-repo", "review-loop"}
	got := Set(fs).Names()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("built-in flows %v, want %v", got, want)
	}
	for name, f := range fs {
		if err := f.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if f.Title == "" {
			t.Errorf("%s: no title", name)
		}
		for i, s := range f.Steps {
			if s.Produces == "" {
				t.Errorf("%s step %d (%s): no produces", name, i+1, s.Slug)
			}
		}
	}
}

func TestBuiltinFlowsMatchTheProductContract(t *testing.T) {
	fs := builtins(t)
	boundary := func(s Step) bool { return s.Boundary }
	type want struct {
		steps      []string
		boundaries []string
		loopTo     string
		gates      []string // gate: approval
		jiraEpics  []string
		jiraTasks  []string
		implements []string
		skipReason []string
		reviewLoop bool
	}
	cases := map[string]want{
		"greenfield": {
			steps:      []string{"problem", "research", "plan", "decompose", "implement", "run-tests", "security-audit", "deploy"},
			boundaries: []string{"decompose"},
			jiraEpics:  []string{"plan"},
			jiraTasks:  []string{"decompose"},
			implements: []string{"implement"},
			skipReason: []string{"security-audit"},
		},
		"existing-code": {
			steps:      []string{"document", "test-spec", "decompose-tests", "implement-tests", "refactor", "new-task", "implement", "run-tests", "security-audit", "deploy"},
			boundaries: []string{"decompose-tests", "new-task"},
			loopTo:     "new-task",
			jiraTasks:  []string{"decompose-tests", "new-task"},
			implements: []string{"implement-tests", "implement"},
			skipReason: []string{"security-audit"},
		},
		"meta-repo": {
			steps:      []string{"discover", "config-review", "plan", "decompose", "implement", "deploy"},
			gates:      []string{"config-review"},
			jiraEpics:  []string{"plan"},
			jiraTasks:  []string{"decompose"},
			implements: []string{"implement"},
		},
		"review-loop": {
			steps:      []string{"interview", "plan", "execute", "code-review", "qa"},
			implements: []string{"execute"},
			skipReason: []string{"qa"},
			reviewLoop: true,
		},
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			f := fs[name]
			if f == nil {
				t.Fatalf("flow %s missing", name)
			}
			check := func(what string, got, want []string) {
				t.Helper()
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: got %v, want %v", what, got, want)
				}
			}
			check("steps", slugs(f), w.steps)
			check("boundaries", where(f, boundary), w.boundaries)
			check("approval gates", where(f, func(s Step) bool { return s.Gate == "approval" }), w.gates)
			check("jira epics", where(f, func(s Step) bool { return s.Jira == "epics" }), w.jiraEpics)
			check("jira tasks", where(f, func(s Step) bool { return s.Jira == "tasks" }), w.jiraTasks)
			check("implements", where(f, func(s Step) bool { return s.Implements }), w.implements)
			check("skip_reason", where(f, func(s Step) bool { return s.SkipReason }), w.skipReason)
			gotLoop := ""
			if f.Loop != nil {
				gotLoop = f.Loop.To
			}
			if gotLoop != w.loopTo {
				t.Errorf("loop to %q, want %q", gotLoop, w.loopTo)
			}
			if f.ReviewLoop != w.reviewLoop {
				t.Errorf("review_loop %v, want %v", f.ReviewLoop, w.reviewLoop)
			}
		})
	}
}

func TestReviewLoopStepsCarryTheirGates(t *testing.T) {
	f := builtins(t)["review-loop"]
	cases := []struct {
		slug      string
		interview bool
		consensus bool
		evidence  string
		returnTo  string
	}{
		{"interview", true, false, "", ""},
		{"plan", false, true, "", ""},
		{"execute", false, false, "", ""},
		{"code-review", false, false, "review", "plan"},
		{"qa", false, false, "checks", "plan"},
	}
	for _, c := range cases {
		i := f.Index(c.slug)
		if i < 0 {
			t.Fatalf("review-loop has no step %q", c.slug)
		}
		s := f.Steps[i]
		if s.Interview != c.interview || s.Consensus != c.consensus || s.Evidence != c.evidence || s.ReturnTo != c.returnTo {
			t.Errorf("%s: interview=%v consensus=%v evidence=%q return_to=%q; want %v %v %q %q",
				c.slug, s.Interview, s.Consensus, s.Evidence, s.ReturnTo, c.interview, c.consensus, c.evidence, c.returnTo)
		}
	}
}

func TestExistingCodeLabelsFollowTheSeedNumbering(t *testing.T) {
	f := builtins(t)["existing-code"]
	want := []string{"Pre", "Step 2b", "Step 2c", "Step 2d", "Step 2e", "Step 2f", "Step 2g", "Step 2h", "Step 2hb", "Step 2i"}
	for i, w := range want {
		if got := f.LabelOf(i + 1); got != w {
			t.Errorf("step %d label %q, want %q", i+1, got, w)
		}
	}
}

func TestBuiltinSourceReturnsACopy(t *testing.T) {
	a := BuiltinSource()
	if len(a) == 0 {
		t.Fatal("empty builtin source")
	}
	a[0] = 'X'
	if b := BuiltinSource(); b[0] == 'X' {
		t.Fatal("BuiltinSource hands out the embedded bytes; a caller can corrupt the built-in flows")
	}
}

func TestIndexStepAtAndLabelOf(t *testing.T) {
	f := &Flow{Name: "x", Steps: []Step{{Slug: "a", Name: "A"}, {Slug: "b", Name: "B", Label: "Pre"}}}
	cases := []struct {
		name      string
		got, want any
	}{
		{"index of first", f.Index("a"), 0},
		{"index of second", f.Index("b"), 1},
		{"index of unknown", f.Index("zzz"), -1},
		{"label defaults to Step N", f.LabelOf(1), "Step 1"},
		{"label from the step", f.LabelOf(2), "Pre"},
		{"label beyond the flow", f.LabelOf(3), "Step 3"},
		{"label at zero", f.LabelOf(0), "Step 0"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	for _, n := range []int{-1, 0, 3} {
		if _, ok := f.StepAt(n); ok {
			t.Errorf("StepAt(%d) ok, want out of range", n)
		}
	}
	if s, ok := f.StepAt(2); !ok || s.Slug != "b" {
		t.Errorf("StepAt(2) = %+v %v", s, ok)
	}
}

func TestValidSlug(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"plan", true},
		{"run-tests", true},
		{"step2", true},
		{"a1-b2-c3", true},
		{strings.Repeat("a", MaxNameLen), true},
		{strings.Repeat("a", MaxNameLen+1), false},
		{"", false},
		{"Plan", false},
		{"2plan", false},
		{"-plan", false},
		{"plan-", false},
		{"run--tests", false},
		{"run_tests", false},
		{"run tests", false},
		{"plän", false},
	}
	for _, c := range cases {
		if got := ValidSlug(c.in); got != c.ok {
			t.Errorf("ValidSlug(%q) = %v, want %v", c.in, got, c.ok)
		}
	}
}

// TestLongestSlugFitsAGitHubLabel: GitHub refuses label names over 50
// characters, and slugs and flow names become labels.
func TestLongestSlugFitsAGitHubLabel(t *testing.T) {
	for _, prefix := range []string{"autopilot/step:", "autopilot/flow:"} {
		if n := len(prefix) + MaxNameLen; n > 50 {
			t.Errorf("%s<name> can be %d characters; GitHub allows 50", prefix, n)
		}
	}
}

func step(slug string) Step { return Step{Slug: slug, Name: strings.ToUpper(slug)} }

func TestValidateNamesTheBadField(t *testing.T) {
	many := make([]Step, 41)
	for i := range many {
		many[i] = Step{Slug: "s" + strings.Repeat("x", i), Name: "S"}
	}
	cases := []struct {
		name    string
		flow    Flow
		path    string
		message string
	}{
		{"flow name not kebab-case", Flow{Name: "My_Flow", Steps: []Step{step("a")}}, "flows.My_Flow", "kebab-case"},
		{"flow name too long for a label", Flow{Name: strings.Repeat("f", MaxNameLen+1), Steps: []Step{step("a")}}, "flows." + strings.Repeat("f", MaxNameLen+1), "longer than 35"},
		{"no steps", Flow{Name: "x"}, "flows.x.steps", "at least one step"},
		{"too many steps", Flow{Name: "x", Steps: many}, "flows.x.steps", "at most 40"},
		{"bad slug", Flow{Name: "x", Steps: []Step{step("a"), {Slug: "Bad Slug", Name: "B"}}}, "flows.x.steps[1].slug", "not a kebab-case slug"},
		{"empty slug", Flow{Name: "x", Steps: []Step{{Name: "A"}}}, "flows.x.steps[0].slug", "not a kebab-case slug"},
		{"reserved slug done", Flow{Name: "x", Steps: []Step{step("a"), step("done")}}, "flows.x.steps[1].slug", `"done" is reserved`},
		{"duplicate step", Flow{Name: "x", Steps: []Step{step("a"), step("b"), step("a")}}, "flows.x.steps[2].slug", `duplicate step "a"`},
		{"missing name", Flow{Name: "x", Steps: []Step{{Slug: "a", Name: "  "}}}, "flows.x.steps[0].name", "required"},
		{"bad jira", Flow{Name: "x", Steps: []Step{{Slug: "a", Name: "A", Jira: "stories"}}}, "flows.x.steps[0].jira", "want epics or tasks"},
		{"bad evidence", Flow{Name: "x", Steps: []Step{{Slug: "a", Name: "A", Evidence: "vibes"}}}, "flows.x.steps[0].evidence", "want review or checks"},
		{"bad gate", Flow{Name: "x", Steps: []Step{{Slug: "a", Name: "A", Gate: "vote"}}}, "flows.x.steps[0].gate", "want approval"},
		{"return_to unknown", Flow{Name: "x", ReviewLoop: true, Steps: []Step{step("a"), {Slug: "b", Name: "B", ReturnTo: "zzz"}}}, "flows.x.steps[1].return_to", `unknown step "zzz"`},
		{"return_to later step", Flow{Name: "x", ReviewLoop: true, Steps: []Step{{Slug: "a", Name: "A", ReturnTo: "b"}, step("b")}}, "flows.x.steps[0].return_to", "earlier step"},
		{"return_to itself", Flow{Name: "x", ReviewLoop: true, Steps: []Step{step("a"), {Slug: "b", Name: "B", ReturnTo: "b"}}}, "flows.x.steps[1].return_to", "earlier step"},
		{"return_to outside a review loop", Flow{Name: "x", Steps: []Step{step("a"), {Slug: "b", Name: "B", ReturnTo: "a"}}}, "flows.x.steps[1].return_to", "needs review_loop: true"},
		{"consensus outside a review loop", Flow{Name: "x", Steps: []Step{{Slug: "a", Name: "A", Consensus: true}}}, "flows.x.steps[0].consensus", "needs review_loop: true"},
		{"loop to unknown", Flow{Name: "x", Steps: []Step{step("a")}, Loop: &Loop{To: "zzz"}}, "flows.x.loop.to", `unknown step "zzz"`},
		{"loop to nothing", Flow{Name: "x", Steps: []Step{step("a")}, Loop: &Loop{}}, "flows.x.loop.to", `unknown step ""`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.flow.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate() = %v, want a *FieldError", err)
			}
			if fe.Path != c.path || !strings.Contains(fe.Msg, c.message) {
				t.Fatalf("got %q, want path %q and message containing %q", err, c.path, c.message)
			}
			if err.Error() != fe.Path+": "+fe.Msg {
				t.Fatalf("Error() = %q, want path: message", err.Error())
			}
		})
	}
}

func TestValidateAcceptsAFullyAttributedFlow(t *testing.T) {
	f := Flow{Name: "release-train", Title: "Release train", ReviewLoop: true, Loop: &Loop{To: "build"}, Steps: []Step{
		{Slug: "spec", Name: "Spec", Label: "Pre", Produces: "a spec", Interview: true},
		{Slug: "build", Name: "Build", Jira: "tasks", Boundary: true, Consensus: true},
		{Slug: "review", Name: "Review", Evidence: "review", ReturnTo: "build", Implements: true},
		{Slug: "qa", Name: "QA", Evidence: "checks", SkipReason: true, ReturnTo: "spec"},
		{Slug: "sign-off", Name: "Sign-off", Gate: "approval", Jira: "epics"},
		{Slug: "ship", Name: "Ship", Confirm: true},
	}}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestSetNamesAreSorted(t *testing.T) {
	s := Set{"zeta": {}, "alpha": {}, "mid": {}}
	if got, want := s.Names(), []string{"alpha", "mid", "zeta"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if got := (Set{}).Names(); len(got) != 0 {
		t.Fatalf("empty set names %v", got)
	}
}
