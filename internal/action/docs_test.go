package action_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/action"
	"github.com/autopilot-dev/autopilot/internal/doctable"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

func actionDoc(t *testing.T) string {
	t.Helper()
	md, err := doctable.Read("docs/action.md")
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// TestDocsInputsAreTheCodes: the Inputs table of docs/action.md names
// exactly the inputs the code reads, and a default written as a literal is
// the default the code applies.
func TestDocsInputsAreTheCodes(t *testing.T) {
	rows := doctable.Rows(doctable.Section(actionDoc(t), "Inputs"))
	var names []string
	defaults := map[string]string{}
	for _, r := range rows {
		c := doctable.Code(r[0])
		if len(c) != 1 || len(r) < 3 {
			t.Fatalf("Inputs row %q: want | `name` | default | meaning |", r)
		}
		names = append(names, c[0])
		if d := doctable.Code(r[1]); len(d) == 1 && !strings.Contains(d[0], "${{") {
			defaults[c[0]] = d[0]
		}
	}
	want := append([]string(nil), wiring.InputNames...)
	sort.Strings(names)
	sort.Strings(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("docs list inputs %v, the code reads %v", names, want)
	}
	in, err := wiring.LoadInputs(func(string) string { return "" }, "")
	if err != nil {
		t.Fatal(err)
	}
	code := map[string]string{
		"config_path": in.ConfigPath, "trigger_label": in.TriggerLabel, "bot_login": in.BotLogin,
		"answer_permission": string(in.AnswerPermission), "dry_run": map[bool]string{false: "false", true: "true"}[in.DryRun],
	}
	for name, d := range defaults {
		if c, ok := code[name]; !ok {
			t.Errorf("docs give %s the default %q; add it to this test's table of code defaults", name, d)
		} else if c != d {
			t.Errorf("docs: %s defaults to %q, code: %q", name, d, c)
		}
	}
	if len(defaults) != len(code) {
		t.Errorf("docs give literal defaults for %v, the code has %v", defaults, code)
	}
}

// TestDocsOutputsAreTheCodes: the outputs table names the outputs the code
// writes.
func TestDocsOutputsAreTheCodes(t *testing.T) {
	rows := doctable.Rows(doctable.Section(actionDoc(t), "Outputs, step summary, annotations, exit codes"))
	var names []string
	for _, r := range rows {
		names = append(names, doctable.Code(r[0])...)
	}
	if strings.Join(names, ",") != strings.Join(action.OutputNames, ",") {
		t.Errorf("docs list outputs %v, the code writes %v", names, action.OutputNames)
	}
}
