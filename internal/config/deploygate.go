package config

import (
	"fmt"
	"strings"
)

// DeployGate configures the deploy gate (docs/deploy-gate.md): autopilot as
// an environment's custom deployment protection rule (App mode) and the
// gate job (Action mode).
type DeployGate struct {
	// Environments are the GitHub environments autopilot answers for;
	// empty means every environment whose protection rule names the App.
	// GitHub's environment names ignore case, and so does this list.
	Environments []string `yaml:"environments,omitempty" json:"environments,omitempty"`
	// AutoApprove approves without asking when every gate passed on the
	// commit and the deploy step was reached by a person's answer.
	AutoApprove bool `yaml:"auto_approve,omitempty" json:"auto_approve,omitempty"`
	// Unmatched is what a request that matches no autopilot issue gets:
	// UnmatchedIgnore (the default: not gated, so other rules or reviewers
	// decide; the App answers approved) or UnmatchedReject.
	Unmatched string `yaml:"unmatched,omitempty" json:"unmatched,omitempty"`
	// Step is the slug of the deploy step (default DefaultDeployStep).
	Step string `yaml:"step,omitempty" json:"step,omitempty"`
}

// Values of DeployGate.Unmatched.
const (
	UnmatchedIgnore = "ignore"
	UnmatchedReject = "reject"
)

// DefaultDeployStep is the deploy step's slug when deploy_gate.step is
// unset: the last step of every built-in flow.
const DefaultDeployStep = "deploy"

// maxEnvironmentName is GitHub's limit on an environment's name.
const maxEnvironmentName = 255

// Gates reports whether the deploy gate answers for environment env.
func (d DeployGate) Gates(env string) bool {
	if len(d.Environments) == 0 {
		return true
	}
	for _, e := range d.Environments {
		if strings.EqualFold(e, env) {
			return true
		}
	}
	return false
}

// checkDeployGate validates deploy_gate and fills in its defaults.
func (c *Config) checkDeployGate(k *checker, slugs map[string]bool) {
	d := &c.DeployGate
	switch d.Unmatched {
	case "":
		d.Unmatched = UnmatchedIgnore
	case UnmatchedIgnore, UnmatchedReject:
	default:
		k.add("deploy_gate.unmatched", fmt.Sprintf("%q: want reject or ignore (or leave it out: ignore, so autopilot never blocks a deploy it knows nothing about)", d.Unmatched), "deploy_gate", "unmatched")
	}
	if d.Step == "" {
		d.Step = DefaultDeployStep
	} else if !slugs[d.Step] {
		k.add("deploy_gate.step", fmt.Sprintf("%q is not a step of any flow; name the step that deploys (default %s)", d.Step, DefaultDeployStep), "deploy_gate", "step")
	}
	seen := map[string]string{}
	for i, e := range d.Environments {
		field, at := fmt.Sprintf("deploy_gate.environments[%d]", i), []string{"deploy_gate", "environments", fmt.Sprintf("[%d]", i)}
		switch {
		case strings.TrimSpace(e) == "":
			k.add(field, "empty environment name: write the environment's name as in Settings → Environments", at...)
		case strings.ContainsAny(e, "\r\n"):
			k.add(field, fmt.Sprintf("%q: an environment name is one line", e), at...)
		case len(e) > maxEnvironmentName:
			k.add(field, fmt.Sprintf("%d characters: GitHub's environment names are at most 255 characters", len(e)), at...)
		default:
			key := strings.ToLower(e)
			if first, dup := seen[key]; dup {
				k.add(field, fmt.Sprintf("%q repeats %q (GitHub's environment names ignore case); list it once", e, first), at...)
			}
			seen[key] = e
		}
	}
}
