package metrics

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The alert rules shipped in deploy/prometheus are checked and unit-tested
// by promtool in .ci/run; these tests hold them to the code in the normal
// test command, so renaming a metric cannot silently leave an alert that
// never fires.

const (
	rulesFile     = "../../../deploy/prometheus/autopilot-rules.yml"
	rulesTestFile = "../../../deploy/prometheus/autopilot-rules_test.yml"
)

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert string `yaml:"alert"`
			Expr  string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

type ruleTestFile struct {
	Tests []struct {
		InputSeries []struct {
			Series string `yaml:"series"`
		} `yaml:"input_series"`
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

var metricName = regexp.MustCompile(`\bautopilot_[a-z0-9_]+\b`)

// family is the family a series name belongs to: itself, or a
// histogram's family without _bucket, _sum or _count.
func family(name string, families []string) (string, bool) {
	if slices.Contains(families, name) {
		return name, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(families, base) {
			return base, true
		}
	}
	return "", false
}

// TestAlertRulesUseRegisteredMetrics: every metric an alert's expression
// names, and every series the rule tests feed in, is one New registers.
func TestAlertRulesUseRegisteredMetrics(t *testing.T) {
	families := New().Families()
	var rules ruleFile
	readYAML(t, rulesFile, &rules)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			names := metricName.FindAllString(r.Expr, -1)
			if len(names) == 0 {
				t.Errorf("alert %s names no autopilot_ metric: %s", r.Alert, r.Expr)
			}
			for _, name := range names {
				n++
				if _, ok := family(name, families); !ok {
					t.Errorf("alert %s uses %s, which the server does not register", r.Alert, name)
				}
			}
		}
	}
	var tests ruleTestFile
	readYAML(t, rulesTestFile, &tests)
	for _, c := range tests.Tests {
		for _, s := range c.InputSeries {
			name, _, _ := strings.Cut(s.Series, "{")
			if _, ok := family(name, families); !ok {
				t.Errorf("a rule test feeds %s, which the server does not register", name)
			}
		}
	}
	if n == 0 {
		t.Fatal("no metric found in the rules")
	}
}

// TestEveryAlertHasAFiringRuleTest: each alert has a promtool case in
// which it fires, so a rule that can never fire fails .ci/run.
func TestEveryAlertHasAFiringRuleTest(t *testing.T) {
	var rules ruleFile
	readYAML(t, rulesFile, &rules)
	var tests ruleTestFile
	readYAML(t, rulesTestFile, &tests)
	fires := map[string]bool{}
	for _, c := range tests.Tests {
		for _, a := range c.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			}
		}
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" && !fires[r.Alert] {
				t.Errorf("alert %s has no rule test in which it fires", r.Alert)
			}
		}
	}
}
