package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestDeployGateDefaultsIgnoreUnmatchedAndGateEveryEnvironment(t *testing.T) {
	c := mustParse(t, "")
	d := c.DeployGate
	if d.Unmatched != UnmatchedIgnore || d.AutoApprove || d.Environments != nil || d.Step != DefaultDeployStep {
		t.Fatalf("defaults = %+v", d)
	}
	for _, env := range []string{"production", "staging"} {
		if !d.Gates(env) {
			t.Errorf("with no environments listed, %q is not gated", env)
		}
	}
}

func TestDeployGateParsesEveryKey(t *testing.T) {
	c := mustParse(t, "deploy_gate:\n  environments: [Production, staging]\n  auto_approve: true\n  unmatched: reject\n  step: release\nflows:\n  rel:\n    steps: [{slug: release, name: Release}]\n")
	want := DeployGate{Environments: []string{"Production", "staging"}, AutoApprove: true, Unmatched: UnmatchedReject, Step: "release"}
	if !reflect.DeepEqual(c.DeployGate, want) {
		t.Fatalf("deploy_gate = %+v, want %+v", c.DeployGate, want)
	}
	// GitHub's environment names ignore case.
	if !c.DeployGate.Gates("production") || !c.DeployGate.Gates("STAGING") || c.DeployGate.Gates("preview") {
		t.Fatal("Gates does not match the listed environments case-insensitively")
	}
}

func TestDeployGateErrorsNameLineAndField(t *testing.T) {
	wantErrors(t, []errorCase{
		{"unknown unmatched policy", "deploy_gate:\n  unmatched: allow\n", 2, "deploy_gate.unmatched", `"allow": want reject or ignore`},
		{"auto_approve not a bool", "deploy_gate:\n  auto_approve: sometimes\n", 2, "deploy_gate.auto_approve", "want true or false"},
		{"unknown key", "deploy_gate:\n  environment: production\n", 2, "deploy_gate.environment", `unknown key "environment" (known: environments, auto_approve, unmatched, step)`},
		{"environments not a list", "deploy_gate:\n  environments: production\n", 2, "deploy_gate.environments", "want a list of strings"},
		{"empty environment", "deploy_gate:\n  environments:\n    - production\n    - ''\n", 4, "deploy_gate.environments[1]", "empty environment name"},
		{"duplicate environment", "deploy_gate:\n  environments:\n    - Production\n    - production\n", 4, "deploy_gate.environments[1]", `"production" repeats "Production" (GitHub's environment names ignore case)`},
		{"environment too long", "deploy_gate:\n  environments: [" + strings.Repeat("e", 256) + "]\n", 2, "deploy_gate.environments[0]", "at most 255 characters"},
		{"environment on two lines", "deploy_gate:\n  environments: [\"prod\\nuction\"]\n", 2, "deploy_gate.environments[0]", "one line"},
		{"unknown step", "deploy_gate:\n  step: ship-it\n", 2, "deploy_gate.step", `"ship-it" is not a step of any flow`},
	})
}
