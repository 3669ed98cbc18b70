package config

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/flow"
)

// The configuration reference must stay true to the code: these tests read
// docs/configuration.md.
const docPath = "../../docs/configuration.md"

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("read %s: %v", docPath, err)
	}
	return string(b)
}

func TestDocsNameEveryKey(t *testing.T) {
	doc := readDoc(t)
	for _, typ := range []reflect.Type{reflect.TypeOf(Config{}), reflect.TypeOf(Limits{}), reflect.TypeOf(Executor{}),
		reflect.TypeOf(Jira{}), reflect.TypeOf(DeployGate{}), reflect.TypeOf(Approval{}), reflect.TypeOf(flow.Flow{}), reflect.TypeOf(flow.Step{})} {
		for _, key := range yamlKeys(typ) {
			if !strings.Contains(doc, "`"+key+"`") && !strings.Contains(doc, "."+key+"`") {
				t.Errorf("docs/configuration.md does not mention %s.%s", typ.Name(), key)
			}
		}
	}
}

var yamlBlockRE = regexp.MustCompile("(?s)```yaml\n(.*?)```")

func TestDocsExamplesParse(t *testing.T) {
	blocks := yamlBlockRE.FindAllStringSubmatch(readDoc(t), -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d yaml examples, want the per-section examples", len(blocks))
	}
	for i, b := range blocks {
		if _, err := Parse([]byte(b[1])); err != nil {
			t.Errorf("example %d does not parse: %v\n%s", i+1, err, b[1])
		}
	}
}

func TestDocsErrorSamplesAreWhatParseSays(t *testing.T) {
	doc := readDoc(t)
	cases := []struct{ src string }{
		{"limits:\n  max_sessions: many\n"},
		{"limit: 3\n"},
		{"flows:\n  hotfix:\n    steps:\n      - {slug: fix, name: Fix}\n      - {slug: fix, name: Fix again}\n"},
		{"limits:\n  max_sessions: 3\nexecutor:\n  kind: robot\n"},
		{"limits:\n\tmax_sessions: 3\n"},
		{"version: 1\nagents: [claude[bot]]\n"},
		{"approvals:\n  approval:\n    teams: [sre]\n"},
		{"approvals:\n  approval:\n    users: [ada, bob, Ada]\n    min: 3\n"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.src))
		if err == nil {
			t.Fatalf("%q parsed", c.src)
		}
		line := ".github/autopilot.yml: " + err.Error()
		if !strings.Contains(doc, line+"\n") {
			t.Errorf("docs/configuration.md lacks the sample error line\n%s", line)
		}
	}
}
