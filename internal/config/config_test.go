package config

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/flow"
	"go.yaml.in/yaml/v3"
)

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return c
}

func TestEmptyFileGivesDefaults(t *testing.T) {
	for _, src := range []string{"", "\n\n  \n", "# all commented out\n# limits:\n#   max_sessions: 9\n", "---\n", "~\n", "---\n# nothing\n...\n"} {
		c := mustParse(t, src)
		if c.Limits != (Limits{MaxSessions: 5, MaxHours: 4.0, ConfidenceThreshold: 0.85}) {
			t.Errorf("%q: limits %+v, want seed 004 defaults 5 / 4.0 / 0.85", src, c.Limits)
		}
		if c.MaxIterations != 10 {
			t.Errorf("%q: max_iterations %d, want 10", src, c.MaxIterations)
		}
		if c.DefaultFlow != "" || c.AnswerPermission != "" || len(c.Roles) != 0 || len(c.Agents) != 0 {
			t.Errorf("%q: unexpected non-default fields %+v", src, c)
		}
		if got := c.All.Names(); !reflect.DeepEqual(got, []string{"existing-code", "greenfield", "meta-repo", "review-loop"}) {
			t.Errorf("%q: flows %v", src, got)
		}
		if ex := c.ExecutorFor("plan"); ex.Kind != flow.ExecManual || time.Duration(ex.Timeout) != flow.StepTimeout {
			t.Errorf("%q: default executor %+v, want manual with the 6h timeout", src, ex)
		}
	}
}

func TestDefaultEqualsAnEmptyFile(t *testing.T) {
	d := Default()
	e := mustParse(t, "")
	if !reflect.DeepEqual(d, e) {
		t.Fatalf("Default() = %+v\nParse(\"\") = %+v", d, e)
	}
}

func TestLimitsClampSilently(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want Limits
		iter int
	}{
		{"defaults", "limits: {}", Limits{5, 4.0, 0.85}, 10},
		{"in range kept", "limits: {max_sessions: 12, max_hours: 2.5, confidence_threshold: 0.6}\nmax_iterations: 30", Limits{12, 2.5, 0.6}, 30},
		{"at the lower bounds", "limits: {max_sessions: 1, max_hours: 0.5, confidence_threshold: 0}\nmax_iterations: 1", Limits{1, 0.5, 0}, 1},
		{"at the upper bounds", "limits: {max_sessions: 50, max_hours: 24, confidence_threshold: 1}\nmax_iterations: 100", Limits{50, 24, 1}, 100},
		{"above clamps to the top", "limits: {max_sessions: 500, max_hours: 100, confidence_threshold: 1.5}\nmax_iterations: 1000", Limits{50, 24, 1}, 100},
		{"below clamps to the bottom", "limits: {max_sessions: -3, max_hours: 0.1, confidence_threshold: -0.2}\nmax_iterations: -1", Limits{1, 0.5, 0}, 1},
		{"explicit zero is clamped, not defaulted", "limits: {max_sessions: 0, max_hours: 0}\nmax_iterations: 0", Limits{1, 0.5, 0.85}, 1},
		{"explicit zero threshold is kept", "limits: {confidence_threshold: 0}", Limits{5, 4.0, 0}, 10},
		{"null means default", "limits: {max_sessions: ~, max_hours: null, confidence_threshold: ~}\nmax_iterations: ~", Limits{5, 4.0, 0.85}, 10},
		{"NaN means default", "limits: {max_hours: .nan, confidence_threshold: .NaN}", Limits{5, 4.0, 0.85}, 10},
		{"infinities clamp", "limits: {max_hours: .inf, confidence_threshold: -.inf}", Limits{5, 24, 0}, 10},
		{"integers for floats", "limits: {max_hours: 3, confidence_threshold: 1}", Limits{5, 3, 1}, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mustParse(t, c.src)
			if got.Limits != c.want || got.MaxIterations != c.iter {
				t.Fatalf("limits %+v max_iterations %d, want %+v %d", got.Limits, got.MaxIterations, c.want, c.iter)
			}
		})
	}
}

// errorCase is a file Parse refuses, with the line, field and message
// (a part of it) the error must name.
type errorCase struct {
	name  string
	src   string
	line  int
	field string
	msg   string
}

// wantErrors checks that Parse refuses each case with its line, field and
// message.
func wantErrors(t *testing.T, cases []errorCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse = %v, want a *config.Error", err)
			}
			if ce.Line != c.line || ce.Field != c.field || !strings.Contains(ce.Msg, c.msg) {
				t.Fatalf("got line %d field %q msg %q\nwant line %d field %q msg containing %q", ce.Line, ce.Field, ce.Msg, c.line, c.field, c.msg)
			}
		})
	}
}

func TestErrorsNameLineAndField(t *testing.T) {
	cases := []errorCase{
		{"unknown top-level key", "version: 1\nlimit:\n  max_sessions: 3\n", 2, "limit", `unknown key "limit" (known: version, default_flow`},
		{"unknown nested key", "limits:\n  max_session: 3\n", 2, "limits.max_session", "known: max_sessions, max_hours, confidence_threshold"},
		{"wrong type", "limits:\n  max_sessions: many\n", 2, "limits.max_sessions", `want a whole number, got "many"`},
		{"wrong type float", "limits:\n  max_hours: lots\n", 2, "limits.max_hours", `want a number, got "lots"`},
		{"wrong type bool", "jira:\n  enabled: maybe\n", 2, "jira.enabled", `want true or false, got "maybe"`},
		{"mapping where a number goes", "limits:\n  max_sessions: {a: 1}\n", 2, "limits.max_sessions", "want a whole number, got a mapping"},
		{"list where a mapping goes", "limits: [1, 2]\n", 1, "limits", "want a mapping, got a list"},
		{"string where a list goes", "roles:\n  architect: ada\n", 2, "roles.architect", `want a list of strings, got "ada"`},
		{"document is a list", "- a\n- b\n", 1, "document", "want a mapping, got a list"},
		{"long value is named", "limits:\n  max_sessions: twelve-and-a-half\n", 2, "limits.max_sessions", "want a whole number"},
		{"duplicate key", "limits:\n  max_hours: 1\n  max_hours: 2\n", 3, "limits.max_hours", "duplicate key (first defined at line 2)"},
		{"tabs", "limits:\n\tmax_sessions: 3\n", 2, "max_sessions", "this line starts with a tab"},
		{"broken YAML", "limits: {max_sessions: 3\n", 1, "limits", "did not find expected"},
		{"broken YAML without a key", "version: 1\n@foo\n", 2, "yaml", "found character that cannot start any token"},
		{"unterminated quote", "version: 1\ndefault_flow: 'greenfield\n", 2, "default_flow", "unexpected end of stream"},
		{"unknown anchor", "version: 1\ndefault_flow: *flow\n", 2, "default_flow", "unknown anchor 'flow' referenced"},
		{"control character", "version: 1\ndefault_flow: green\x01field\n", 2, "default_flow", "control characters are not allowed"},
		{"second document", "version: 1\n---\nversion: 1\n", 3, "document", "one YAML document"},
		{"version 2", "# header\nversion: 2\n", 2, "version", "2 is not supported (want 1)"},
		{"unknown executor kind", "executor:\n  kind: robot\n", 2, "executor.kind", `"robot": want manual, comment or dispatch`},
		{"dispatch without workflow", "executor:\n  kind: dispatch\n  ref: main\n", 1, "executor.workflow", "needs a workflow file name"},
		{"comment without agent", "executor:\n  kind: comment\n", 1, "executor.agent", "needs an agent to mention"},
		{"agent is not a mention", "executor:\n  kind: comment\n  agent: claude please\n", 3, "executor.agent", "want a mention such as @claude"},
		{"step dispatch without workflow", "steps:\n  implement:\n    kind: dispatch\n", 2, "steps.implement.workflow", "needs a workflow"},
		{"step comment without agent", "steps:\n  plan:\n    kind: comment\n", 2, "steps.plan.agent", "needs an agent"},
		{"step unknown kind", "steps:\n  plan:\n    kind: robot\n", 3, "steps.plan.kind", "want manual, comment or dispatch"},
		{"step unknown kind under a broken default", "executor: {kind: robot}\nsteps:\n  plan:\n    kind: robot2\n", 1, "executor.kind", `"robot"`},
		{"unknown step under steps", "steps:\n  plan: {kind: manual}\n  deploy-to-mars: {kind: manual}\n", 3, "steps.deploy-to-mars", "no flow has a step with this slug"},
		{"bad timeout", "executor:\n  timeout: 5\n", 2, "executor.timeout", `"5" is not a duration (e.g. 90s, 2h)`},
		{"negative timeout", "steps:\n  plan:\n    timeout: -1h\n", 3, "steps.plan.timeout", "is not a duration"},
		{"timeout is a mapping", "executor:\n  timeout: {h: 1}\n", 2, "executor.timeout", "want a duration (e.g. 90s, 2h), got a mapping"},
		{"bad search lag", "jira:\n  search_lag: soon\n", 2, "jira.search_lag", `"soon" is not a duration`},
		{"answer_permission read", "answer_permission: read\n", 1, "answer_permission", `"read": want triage, write, maintain or admin`},
		{"answer_permission none", "answer_permission: none\n", 1, "answer_permission", "want triage"},
		{"answer_permission unknown", "\nanswer_permission: owner\n", 2, "answer_permission", "want triage"},
		{"unknown role", "roles:\n  reviewer: [ada]\n", 2, "roles.reviewer", "unknown role (want architect or critic)"},
		{"empty login", "roles:\n  architect:\n    - ada\n    - \"@\"\n", 4, "roles.architect[1]", "empty login"},
		{"team in roles", "roles:\n  critic: ['@acme/reviewers']\n", 2, "roles.critic[0]", "teams are not supported"},
		{"bad login in roles", "roles:\n  critic: [not a login]\n", 2, "roles.critic[0]", "is not a GitHub login"},
		{"bad agent login", "agents:\n  - ok-bot[bot]\n  - \"bad login\"\n", 3, "agents[1]", "is not a GitHub login"},
		{"unknown default_flow", "default_flow: waterfall\n", 1, "default_flow", `unknown flow "waterfall" (have existing-code, greenfield, meta-repo, review-loop)`},
		{"bad jira deployment", "jira:\n  deployment: server\n", 2, "jira.deployment", "want cloud or datacenter"},
		{"bad jira project", "jira:\n  project: my-proj\n", 2, "jira.project", "not a Jira project key"},
		{"bad custom field", "jira:\n  epic_link_field: Epic Link\n", 2, "jira.epic_link_field", "customfield_10016"},
		{"bad points field", "jira:\n  points_field: '10016'\n", 2, "jira.points_field", "custom field id"},
		{"task files outside the repo", "jira:\n  task_files: ../elsewhere\n", 2, "jira.task_files", "inside the repository"},
		{"task files absolute", "jira:\n  task_files: /etc\n", 2, "jira.task_files", "inside the repository"},
		{"custom flow redefines a built-in", "flows:\n  greenfield:\n    steps: [{slug: a, name: A}]\n", 2, "flows.greenfield", "redefines a built-in flow"},
		{"custom flow duplicate step", "flows:\n  hotfix:\n    steps:\n      - {slug: fix, name: Fix}\n      - {slug: fix, name: Fix again}\n", 5, "flows.hotfix.steps[1].slug", `duplicate step "fix"`},
		{"custom flow bad slug", "flows:\n  hotfix:\n    steps:\n      - slug: Fix_It\n        name: Fix\n", 4, "flows.hotfix.steps[0].slug", "not a kebab-case slug"},
		{"custom flow slug too long", "flows:\n  hotfix:\n    steps:\n      - {slug: " + strings.Repeat("a", 36) + ", name: A}\n", 4, "flows.hotfix.steps[0].slug", "at most 35 characters"},
		{"custom flow name not kebab", "flows:\n  Hot_Fix:\n    steps: [{slug: a, name: A}]\n", 2, "flows.Hot_Fix", "kebab-case"},
		{"custom flow without steps", "flows:\n  hotfix:\n    title: Hotfix\n", 2, "flows.hotfix.steps", "at least one step"},
		{"custom flow step without name", "flows:\n  hotfix:\n    steps:\n      - slug: a\n", 4, "flows.hotfix.steps[0].name", "required"},
		{"custom flow return_to later", "flows:\n  hotfix:\n    review_loop: true\n    steps:\n      - {slug: a, name: A, return_to: b}\n      - {slug: b, name: B}\n", 5, "flows.hotfix.steps[0].return_to", "must name an earlier step"},
		{"custom flow return_to unknown", "flows:\n  hotfix:\n    review_loop: true\n    steps:\n      - slug: a\n        name: A\n      - slug: b\n        name: B\n        return_to: c\n", 9, "flows.hotfix.steps[1].return_to", `unknown step "c"`},
		{"custom flow return_to outside a review loop", "flows:\n  hotfix:\n    steps:\n      - {slug: a, name: A}\n      - {slug: b, name: B, return_to: a}\n", 5, "flows.hotfix.steps[1].return_to", "needs review_loop: true on the flow"},
		{"custom flow consensus outside a review loop", "flows:\n  hotfix:\n    steps:\n      - slug: a\n        name: A\n        consensus: true\n", 6, "flows.hotfix.steps[0].consensus", "needs review_loop: true on the flow"},
		{"custom flow loop.to unknown", "flows:\n  hotfix:\n    loop:\n      to: nowhere\n    steps: [{slug: a, name: A}]\n", 4, "flows.hotfix.loop.to", `unknown step "nowhere"`},
		{"custom flow reserved slug done", "flows:\n  hotfix:\n    steps:\n      - {slug: a, name: A}\n      - {slug: done, name: Done}\n", 5, "flows.hotfix.steps[1].slug", `"done" is reserved`},
		{"custom flow bad jira", "flows:\n  hotfix:\n    steps:\n      - slug: a\n        name: A\n        jira: stories\n", 6, "flows.hotfix.steps[0].jira", `"stories": want epics or tasks`},
		{"custom flow bad evidence", "flows:\n  hotfix:\n    steps:\n      - slug: a\n        name: A\n        evidence: trust-me\n", 6, "flows.hotfix.steps[0].evidence", "want review or checks"},
		{"custom flow bad gate", "flows:\n  hotfix:\n    steps:\n      - slug: a\n        name: A\n        gate: vote\n", 6, "flows.hotfix.steps[0].gate", "want approval"},
		{"custom flow unknown step attribute", "flows:\n  hotfix:\n    steps:\n      - {slug: a, name: A, parallel: true}\n", 4, "flows.hotfix.steps[0].parallel", `unknown key "parallel" (known: slug, name, label`},
		{"custom flow cannot set its name", "flows:\n  hotfix:\n    name: x\n    steps: [{slug: a, name: A}]\n", 3, "flows.hotfix.name", `unknown key "name"`},
		{"custom flow boundary not a bool", "flows:\n  hotfix:\n    steps:\n      - {slug: a, name: A, boundary: sometimes}\n", 4, "flows.hotfix.steps[0].boundary", "want true or false"},
	}
	wantErrors(t, cases)
}

func TestFileLargerThan256KiBIsRefused(t *testing.T) {
	for _, body := range []string{"# " + strings.Repeat("x", MaxFileSize) + "\n", strings.Repeat(" ", MaxFileSize+1)} {
		_, err := Parse([]byte(body))
		var ce *Error
		if !errors.As(err, &ce) || ce.Field != "file" || !strings.Contains(ce.Msg, "larger than 256 KiB") {
			t.Fatalf("Parse(%d bytes) = %v, want a file-size error", len(body), err)
		}
	}
	ok := "# " + strings.Repeat("x", MaxFileSize-4) + "\n"
	if len(ok) > MaxFileSize {
		t.Fatal("test input too large")
	}
	mustParse(t, ok)
}

func TestErrorFormat(t *testing.T) {
	cases := []struct {
		err  Error
		want string
	}{
		{Error{Line: 4, Field: "executor.kind", Msg: "bad"}, "line 4: executor.kind: bad"},
		{Error{Field: "file", Msg: "too big"}, "file: too big"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

func TestFirstErrorInFileOrderIsReported(t *testing.T) {
	// Three errors in three map-typed sections; the earliest line wins every
	// time, whatever the map iteration order.
	src := "steps:\n  zzz-unknown: {}\n  aaa-unknown: {}\nroles:\n  boss: [ada]\nflows:\n  hotfix:\n    steps: []\n"
	for i := 0; i < 20; i++ {
		_, err := Parse([]byte(src))
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != 2 || ce.Field != "steps.zzz-unknown" {
			t.Fatalf("run %d: %v, want line 2 steps.zzz-unknown", i, err)
		}
	}
}

func TestExecutorForMergesTheStepOverTheDefault(t *testing.T) {
	c := mustParse(t, `
executor:
  kind: comment
  agent: claude
  prompt: "{{agent}} go"
  workflow: step.yml
  ref: main
  timeout: 2h
steps:
  implement:
    kind: dispatch
    timeout: 30m
  deploy:
    kind: dispatch
    workflow: deploy.yml
    ref: prod
  plan:
    kind: manual
  security-audit:
    agent: "@auditor"
    prompt: audit
`)
	cases := []struct {
		slug string
		want Executor
	}{
		{"problem", Executor{Kind: "comment", Agent: "@claude", Prompt: "{{agent}} go", Workflow: "step.yml", Ref: "main", Timeout: Duration(2 * time.Hour)}},
		{"implement", Executor{Kind: "dispatch", Agent: "@claude", Prompt: "{{agent}} go", Workflow: "step.yml", Ref: "main", Timeout: Duration(30 * time.Minute)}},
		{"deploy", Executor{Kind: "dispatch", Agent: "@claude", Prompt: "{{agent}} go", Workflow: "deploy.yml", Ref: "prod", Timeout: Duration(2 * time.Hour)}},
		{"plan", Executor{Kind: "manual", Agent: "@claude", Prompt: "{{agent}} go", Workflow: "step.yml", Ref: "main", Timeout: Duration(2 * time.Hour)}},
		{"security-audit", Executor{Kind: "comment", Agent: "@auditor", Prompt: "audit", Workflow: "step.yml", Ref: "main", Timeout: Duration(2 * time.Hour)}},
	}
	for _, tc := range cases {
		if got := c.ExecutorFor(tc.slug); got != tc.want {
			t.Errorf("ExecutorFor(%q) = %+v\nwant %+v", tc.slug, got, tc.want)
		}
	}
}

func TestExecutorForDefaultsToManualWithSixHourTimeout(t *testing.T) {
	c := mustParse(t, "steps:\n  deploy:\n    kind: dispatch\n    workflow: deploy.yml\n")
	if got := c.ExecutorFor("plan"); got != (Executor{Kind: "manual", Timeout: Duration(6 * time.Hour)}) {
		t.Errorf("plan: %+v", got)
	}
	if got := c.ExecutorFor("deploy"); got != (Executor{Kind: "dispatch", Workflow: "deploy.yml", Timeout: Duration(6 * time.Hour)}) {
		t.Errorf("deploy: %+v", got)
	}
	zero := mustParse(t, "executor:\n  timeout: 0s\n")
	if got := zero.ExecutorFor("plan").Timeout; time.Duration(got) != 6*time.Hour {
		t.Errorf("timeout 0s: %v, want the 6h default", time.Duration(got))
	}
}

func TestStepEntriesInheritWhatValidationNeeds(t *testing.T) {
	// The step names no workflow or agent itself; the default supplies it.
	cases := []string{
		"executor: {workflow: step.yml}\nsteps: {implement: {kind: dispatch}}\n",
		"executor: {agent: '@claude'}\nsteps: {implement: {kind: comment}}\n",
		"executor: {kind: comment, agent: '@claude'}\nsteps: {plan: {kind: comment}}\n",
	}
	for _, src := range cases {
		mustParse(t, src)
	}
}

func TestAgentMentionGetsItsAt(t *testing.T) {
	c := mustParse(t, "executor: {kind: comment, agent: claude}\nsteps:\n  plan: {agent: ' copilot '}\n")
	if got := c.ExecutorFor("research").Agent; got != "@claude" {
		t.Errorf("default agent %q, want @claude", got)
	}
	if got := c.ExecutorFor("plan").Agent; got != "@copilot" {
		t.Errorf("plan agent %q, want @copilot", got)
	}
	team := mustParse(t, "executor: {kind: comment, agent: '@acme/bots'}\n")
	if got := team.ExecutorFor("plan").Agent; got != "@acme/bots" {
		t.Errorf("team mention %q", got)
	}
}

func TestHasRole(t *testing.T) {
	c := mustParse(t, "roles:\n  architect: ['@Ada', grace]\n  critic: [linus]\n")
	cases := []struct {
		role, login string
		want        bool
	}{
		{"architect", "ada", true},
		{"architect", "ADA", true},
		{"architect", "@ada", true},
		{"architect", "Grace", true},
		{"architect", "linus", false},
		{"critic", "linus", true},
		{"critic", "@LINUS", true},
		{"critic", "ada", false},
		{"critic", "", false},
		{"reviewer", "ada", false},
		{"architect", "ad", false},
	}
	for _, tc := range cases {
		if got := c.HasRole(tc.role, tc.login); got != tc.want {
			t.Errorf("HasRole(%q, %q) = %v, want %v", tc.role, tc.login, got, tc.want)
		}
	}
	if Default().HasRole("architect", "ada") {
		t.Error("no roles configured, yet ada is an architect")
	}
}

func TestIsAgent(t *testing.T) {
	c := mustParse(t, "agents: ['claude[bot]', '@Copilot-SWE-Agent[bot]']\n")
	cases := []struct {
		login string
		want  bool
	}{
		{"claude[bot]", true},
		{"Claude[bot]", true},
		{"copilot-swe-agent[bot]", true},
		{"@claude[bot]", true},
		{"claude", false},
		{"github-actions[bot]", false},
		{"", false},
	}
	for _, tc := range cases {
		if got := c.IsAgent(tc.login); got != tc.want {
			t.Errorf("IsAgent(%q) = %v, want %v", tc.login, got, tc.want)
		}
	}
}

func TestCustomFlowJoinsTheBuiltins(t *testing.T) {
	c := mustParse(t, `
default_flow: hotfix
flows:
  hotfix:
    title: Hotfix
    review_loop: true
    steps:
      - {slug: triage, name: Triage}
      - {slug: patch, name: Patch, implements: true}
      - {slug: verify, name: Verify, evidence: checks, return_to: patch}
steps:
  patch: {kind: dispatch, workflow: patch.yml}
`)
	f := c.All["hotfix"]
	if f == nil || f.Name != "hotfix" || f.Title != "Hotfix" || len(f.Steps) != 3 {
		t.Fatalf("custom flow %+v", f)
	}
	if c.All["greenfield"] == nil || len(c.All) != 5 {
		t.Fatalf("flows %v", c.All.Names())
	}
	if got := c.ExecutorFor("patch"); got.Kind != "dispatch" || got.Workflow != "patch.yml" {
		t.Fatalf("executor of a custom step %+v", got)
	}
}

func TestBuiltinDefaultFlowsAreAccepted(t *testing.T) {
	for _, name := range []string{"greenfield", "existing-code", "meta-repo", "review-loop"} {
		if c := mustParse(t, "default_flow: "+name); c.DefaultFlow != name {
			t.Errorf("default_flow %q", c.DefaultFlow)
		}
	}
}

func TestAnswerPermissionAcceptsTriageAndAbove(t *testing.T) {
	for _, p := range []string{"triage", "write", "maintain", "admin"} {
		if c := mustParse(t, "answer_permission: "+p); c.AnswerPermission != p {
			t.Errorf("answer_permission %q", c.AnswerPermission)
		}
	}
}

func TestFullExampleParses(t *testing.T) {
	data, err := os.ReadFile("testdata/full.yml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data)
	if err != nil {
		t.Fatalf("testdata/full.yml: %v", err)
	}
	yes := true
	checks := []struct {
		name      string
		got, want any
	}{
		{"version", c.Version, 1},
		{"default_flow", c.DefaultFlow, "release-train"},
		{"answer_permission", c.AnswerPermission, "maintain"},
		{"limits", c.Limits, Limits{8, 6.5, 0.9}},
		{"max_iterations", c.MaxIterations, 12},
		{"keep_stale_approvals", c.KeepStaleApprovals, true},
		{"architects", c.Roles["architect"], []string{"@ada", "grace"}},
		{"is architect", c.HasRole("architect", "Grace"), true},
		{"is critic", c.HasRole("critic", "linus"), true},
		{"agent", c.IsAgent("copilot-swe-agent[bot]"), true},
		{"default executor", c.ExecutorFor("problem").Kind, "comment"},
		{"plan manual", c.ExecutorFor("plan").Kind, "manual"},
		{"build inherits workflow", c.ExecutorFor("build"), Executor{Kind: "dispatch", Agent: "@claude", Prompt: c.Executor.Prompt, Workflow: "autopilot-step.yml", Ref: "main", Timeout: Duration(3 * time.Hour)}},
		{"implement own workflow", c.ExecutorFor("implement").Workflow + "@" + c.ExecutorFor("implement").Ref, "implement.yml@release"},
		{"implement timeout", time.Duration(c.ExecutorFor("implement").Timeout), 90 * time.Minute},
		{"audit agent", c.ExecutorFor("security-audit").Agent, "@security-bot"},
		{"jira", c.Jira, Jira{Enabled: &yes, Project: "REL", Deployment: "datacenter", EpicLinkField: "customfield_10100", EpicNameField: "customfield_10102",
			PointsField: "customfield_10016", TaskType: "Task", EpicType: "Epic", SearchLag: Duration(90 * time.Second), TaskFiles: "_docs/02_tasks", TransitionOnClose: true}},
		{"flows", c.All.Names(), []string{"existing-code", "greenfield", "meta-repo", "release-train", "review-loop"}},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s: got %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	f := c.All["release-train"]
	if f.Loop == nil || f.Loop.To != "build" || !f.ReviewLoop || f.Title != "Release train" {
		t.Errorf("release-train flow attributes %+v", f)
	}
	if !strings.Contains(c.Executor.Prompt, "{{produces}}") {
		t.Errorf("prompt %q", c.Executor.Prompt)
	}
}

// TestFullExampleUsesEveryKey keeps testdata/full.yml complete: every key of
// every schema type, and every step attribute, appears in it.
func TestFullExampleUsesEveryKey(t *testing.T) {
	data, err := os.ReadFile("testdata/full.yml")
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, string(data))
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	sections := map[string]reflect.Type{
		"":                            reflect.TypeOf(Config{}),
		"limits":                      reflect.TypeOf(Limits{}),
		"executor":                    reflect.TypeOf(Executor{}),
		"jira":                        reflect.TypeOf(Jira{}),
		"deploy_gate":                 reflect.TypeOf(DeployGate{}),
		"flows.release-train":         reflect.TypeOf(flow.Flow{}),
		"flows.release-train.loop":    reflect.TypeOf(flow.Loop{}),
		"approvals.approval-sign-off": reflect.TypeOf(Approval{}),
	}
	for section, typ := range sections {
		for _, key := range yamlKeys(typ) {
			var path []string
			if section != "" {
				path = strings.Split(section, ".")
			}
			if !present(&root, append(path, key)...) {
				t.Errorf("full.yml lacks %s", strings.TrimPrefix(section+"."+key, "."))
			}
		}
	}
	// Step attributes: each set (to a non-zero value) on some step.
	steps := c.All["release-train"].Steps
	st := reflect.TypeOf(flow.Step{})
	for i := 0; i < st.NumField(); i++ {
		key, _, _ := strings.Cut(st.Field(i).Tag.Get("yaml"), ",")
		used := false
		for _, s := range steps {
			if !reflect.ValueOf(s).Field(i).IsZero() {
				used = true
			}
		}
		if !used {
			t.Errorf("full.yml sets no step's %s", key)
		}
	}
	for _, role := range []string{"architect", "critic"} {
		if len(c.Roles[role]) == 0 {
			t.Errorf("full.yml has no %s", role)
		}
	}
}

// yamlKeys lists the YAML keys of a struct type in field order.
func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "-" {
			out = append(out, name)
		}
	}
	return out
}

func TestSplitLinesCountsEveryYAMLLineBreak(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a", "b", ""}},
		{"a\rb", []string{"a", "b"}},
		{"a\u0085b\u2028c\u2029d", []string{"a", "b", "c", "d"}},
	}
	for _, c := range cases {
		var got []string
		for _, l := range splitLines([]byte(c.in)) {
			got = append(got, string(l))
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitLines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestErrorLinesMatchCRLFFiles(t *testing.T) {
	_, err := Parse([]byte("version: 1\r\nlimits:\r\n  max_sessions: many\r\n"))
	var ce *Error
	if !errors.As(err, &ce) || ce.Line != 3 || ce.Field != "limits.max_sessions" {
		t.Fatalf("%v, want line 3 limits.max_sessions", err)
	}
}

func TestUTF16FilesAreRead(t *testing.T) {
	enc := func(s string, be bool) []byte {
		out := []byte{0xFF, 0xFE}
		if be {
			out = []byte{0xFE, 0xFF}
		}
		for _, r := range s { // ASCII only
			if be {
				out = append(out, 0, byte(r))
			} else {
				out = append(out, byte(r), 0)
			}
		}
		return out
	}
	for _, be := range []bool{true, false} {
		c, err := Parse(enc("limits:\n  max_sessions: 7\n", be))
		if err != nil || c.Limits.MaxSessions != 7 {
			t.Fatalf("big-endian %v: %v %+v", be, err, c)
		}
		_, err = Parse(enc("version: 1\nlimits:\n  max_sessions: x\n", be))
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != 3 || ce.Field != "limits.max_sessions" {
			t.Fatalf("big-endian %v: %v, want line 3 limits.max_sessions", be, err)
		}
	}
	_, err := Parse([]byte{0xFE, 0xFF, 0x00})
	var ce *Error
	if !errors.As(err, &ce) || ce.Field != "file" || !strings.Contains(ce.Msg, "UTF-16") {
		t.Fatalf("odd UTF-16: %v", err)
	}
}

func TestTrackerKey(t *testing.T) {
	for _, v := range []string{"jira", "github", "local"} {
		c, err := Parse([]byte("tracker: " + v + "\nclose_children: true\n"))
		if err != nil {
			t.Fatalf("tracker: %s: %v", v, err)
		}
		if c.Tracker != v || !c.CloseChildren {
			t.Fatalf("tracker: %s parsed as %q close_children %v", v, c.Tracker, c.CloseChildren)
		}
	}
	_, err := Parse([]byte("version: 1\ntracker: gitlab\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2: tracker:") || !strings.Contains(err.Error(), "want jira, github or local") {
		t.Fatalf("tracker: gitlab: error %v, want one naming line 2 and the values", err)
	}
}

// TestSyntaxErrorsNameTheBadTokensLine: a YAML syntax error names the line
// of the token that broke the file, not the line where the enclosing list or
// mapping began (the YAML parser counts those lines from 0), and an unquoted
// "[bot]" login in a [...] list says to quote it, as docs/configuration.md
// warns.
func TestSyntaxErrorsNameTheBadTokensLine(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"unquoted bot login in a flow list", "version: 1\nagents: [claude[bot]]\n",
			`line 2: agents: did not find expected ',' or ']' (a login that ends in [bot] inside [...] must be quoted: agents: ["claude[bot]"])`},
		{"unquoted bot login after others", "version: 1\ndefault_flow: greenfield\nagents: [ada, copilot-swe-agent[bot]]\n",
			`line 3: agents: did not find expected ',' or ']' (a login that ends in [bot] inside [...] must be quoted: agents: ["copilot-swe-agent[bot]"])`},
		{"key indented one space too few", "version: 1\nlimits:\n  max_sessions: 3\n max_hours: 2\n",
			"line 4: max_hours: did not find expected key"},
		{"bad token deep in a mapping", "version: 1\nlimits:\n  max_sessions: 3\n  max_hours: 2\n  - 4\n",
			"line 5: yaml: did not find expected key"},
		{"unclosed flow mapping on line 1", "limits: {max_sessions: 3\n",
			"line 1: limits: did not find expected ',' or '}'"},
		{"unclosed flow list in a block list", "version: 1\nagents:\n  - a\n  - [b\n",
			"line 4: yaml: did not find expected ',' or ']'"},
		{"unterminated quote names its start", "version: 1\ndefault_flow: 'greenfield\n\n",
			"line 2: default_flow: found unexpected end of stream"},
		{"bad escape inside a long quoted string", "version: 1\nexecutor:\n  prompt: \"Run the step\n    and report\n    with \\q please\"\n",
			"line 5: yaml: found unknown escape character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src))
			if err == nil || err.Error() != c.want {
				t.Fatalf("Parse(%q)\n got %v\nwant %s", c.src, err, c.want)
			}
		})
	}
}
