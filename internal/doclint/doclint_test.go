package doclint

import (
	"os/exec"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const sample = "# Title\n" + // 1
	"\n" + // 2
	"```yaml\n" + // 3
	"name: x\n" + // 4
	"on: push\n" + // 5
	"jobs:\n" + // 6
	"  a:\n" + // 7
	"    runs-on: ubuntu-latest\n" + // 8
	"    steps:\n" + // 9
	"      - run: echo hi\n" + // 10
	"```\n" + // 11
	"\n" + // 12
	"1. In a list item:\n" + // 13
	"\n" + // 14
	"   ```yaml\n" + // 15
	"       steps:\n" + // 16
	"         - uses: actions/checkout@v4\n" + // 17
	"   ```\n" + // 18
	"```yaml\n" + // 19
	"        with:\n" + // 20
	"          state_key: k\n" + // 21
	"```\n" + // 22
	"```yaml\n" + // 23
	"    jira_url: https://jira.example\n" + // 24
	"```\n" + // 25
	"```yml\n" + // 26
	"- uses: a/b@v1\n" + // 27
	"  with: {x: 1}\n" + // 28
	"```\n" + // 29
	"```yaml\n" + // 30
	"limits:\n" + // 31
	"  max_sessions: 3\n" + // 32
	"steps:\n" + // 33
	"  plan: {kind: manual}\n" + // 34
	"```\n" + // 35
	"```yaml\n" + // 36
	"run-name: autopilot ${{ inputs.session }}\n" + // 37
	"```\n" + // 38
	"```yaml\n" + // 39
	"name: top only\n" + // 40
	"permissions: {}\n" + // 41
	"```\n" + // 42
	"```sh\n" + // 43
	"echo not yaml\n" + // 44
	"```\n"

func wrapAll(t *testing.T) []Workflow {
	t.Helper()
	linted := map[string]string{"docs/examples/step.yml": "name: step\nrun-name: autopilot ${{ inputs.session }}\non: workflow_dispatch\n"}
	var out []Workflow
	for _, s := range Extract("docs/x.md", []byte(sample)) {
		w, err := Wrap(s, map[string]bool{"jira_url": true, "state_key": true}, linted)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, w)
	}
	return out
}

func TestExtractFindsYAMLBlocksWithTheirLines(t *testing.T) {
	got := Extract("docs/x.md", []byte(sample))
	want := []struct {
		line, indent int
		text         string
	}{
		{4, 0, "name: x\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n"},
		{16, 7, "steps:\n  - uses: actions/checkout@v4\n"},
		{20, 8, "with:\n  state_key: k\n"},
		{24, 4, "jira_url: https://jira.example\n"},
		{27, 0, "- uses: a/b@v1\n  with: {x: 1}\n"},
		{31, 0, "limits:\n  max_sessions: 3\nsteps:\n  plan: {kind: manual}\n"},
		{37, 0, "run-name: autopilot ${{ inputs.session }}\n"},
		{40, 0, "name: top only\npermissions: {}\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d blocks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Line != w.line || got[i].Indent != w.indent || got[i].Text != w.text {
			t.Errorf("block %d = line %d indent %d %q\nwant line %d indent %d %q", i, got[i].Line, got[i].Indent, got[i].Text, w.line, w.indent, w.text)
		}
	}
}

func TestWrapMakesEachFragmentAWorkflow(t *testing.T) {
	const job = "on: workflow_dispatch\njobs:\n  doclint:\n    runs-on: ubuntu-latest\n"
	want := []struct {
		kind Kind
		yaml string
	}{
		{Whole, "name: x\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n"},
		{Job, "on: workflow_dispatch\njobs:\n  doclint:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"},
		{Step, job + "    steps:\n      -\n        uses: autopilot-dev/autopilot@v1\n        with:\n          state_key: k\n"},
		{With, job + "    steps:\n      - uses: autopilot-dev/autopilot@v1\n        with:\n          jira_url: https://jira.example\n"},
		{Steps, job + "    steps:\n      - uses: a/b@v1\n        with: {x: 1}\n"},
		{NotWorkflow, ""},
		{Excerpt, ""},
		{Top, "on: workflow_dispatch\nname: top only\npermissions: {}\njobs:\n  doclint:\n    runs-on: ubuntu-latest\n    steps:\n      - run: \"true\"\n"},
	}
	got := wrapAll(t)
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].YAML != w.yaml {
			t.Errorf("block %d (line %d): kind %q\n%s\nwant kind %q\n%s", i, got[i].Line, got[i].Kind, got[i].YAML, w.kind, w.yaml)
			continue
		}
		if w.yaml == "" {
			continue
		}
		var wf struct {
			On   any            `yaml:"on"`
			Jobs map[string]any `yaml:"jobs"`
		}
		if err := yaml.Unmarshal([]byte(got[i].YAML), &wf); err != nil || wf.On == nil || len(wf.Jobs) == 0 {
			t.Errorf("block %d: wrapped YAML is not a workflow (%v):\n%s", i, err, got[i].YAML)
		}
	}
	if got[6].Of != "docs/examples/step.yml" {
		t.Errorf("excerpt found in %q, want docs/examples/step.yml", got[6].Of)
	}
}

// TestDocPosMapsWrappedLinesBack: a finding in the wrapped workflow names
// the doc line (and column) of the snippet it came from; a line the wrapper
// added has no doc position.
func TestDocPosMapsWrappedLinesBack(t *testing.T) {
	ws := wrapAll(t)
	cases := []struct {
		block, line, col int
		docLine, docCol  int
		ok               bool
	}{
		{0, 7, 9, 10, 9, true},  // "      - run: echo hi": same place
		{1, 6, 9, 17, 12, true}, // "      - uses:" of the list-item block (doc column 10 + 2)
		{1, 1, 1, 0, 0, false},  // the added on:
		{2, 9, 11, 21, 11, true},
		{3, 8, 11, 24, 5, true},
	}
	for _, c := range cases {
		line, col, ok := ws[c.block].DocPos(c.line, c.col)
		if line != c.docLine || col != c.docCol || ok != c.ok {
			t.Errorf("block %d DocPos(%d, %d) = %d, %d, %v; want %d, %d, %v", c.block, c.line, c.col, line, col, ok, c.docLine, c.docCol, c.ok)
		}
	}
	if y := ws[1].YAML; !strings.Contains(strings.Split(y, "\n")[5], "- uses: actions/checkout@v4") {
		t.Fatalf("line 6 of the wrapped job is %q", strings.Split(y, "\n")[5])
	}
}

// TestDocsWorkflowSnippetsAreFound: the repository's docs hold workflow
// snippets of every fragment kind .ci/run lints, and none is lost as
// "not a workflow".
func TestDocsWorkflowSnippetsAreFound(t *testing.T) {
	ws, err := Collect("../..")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]int{}
	for _, w := range ws {
		kinds[w.Kind]++
		if w.Kind != Excerpt && !strings.Contains(w.YAML, "jobs:") {
			t.Errorf("%s:%d: wrapped workflow has no jobs:\n%s", w.Doc, w.Line, w.YAML)
		}
	}
	for _, k := range []Kind{Whole, Job, Steps, With} {
		if kinds[k] == 0 {
			t.Errorf("no %q snippet found in the docs (found %v)", k, kinds)
		}
	}
}

// TestDocsWorkflowSnippetsPassActionlint runs what .ci/run runs, when
// actionlint and shellcheck are installed (.ci/run installs both).
func TestDocsWorkflowSnippetsPassActionlint(t *testing.T) {
	actionlint, err := exec.LookPath("actionlint")
	if err != nil {
		t.Skip("actionlint is not on PATH (.ci/run installs it and runs scripts/doclint)")
	}
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not on PATH (apt-get install shellcheck)")
	}
	ws, err := Collect("../..")
	if err != nil {
		t.Fatal(err)
	}
	found, err := Lint(ws, t.TempDir(), actionlint, shellcheck)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}
