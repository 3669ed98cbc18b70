package ghevent

import (
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
)

// deployment_protection_rule: requested — a workflow run's job waits on an
// environment whose custom protection rule is this App
// (docs/deploy-gate.md). It becomes events.DeploymentRequested; the issues
// its pull requests link are LinkedIssues.
type deploymentRulePayload struct {
	envelope
	Environment  string      `json:"environment"`
	SHA          string      `json:"sha"`
	Ref          string      `json:"ref"`
	CallbackURL  string      `json:"deployment_callback_url"`
	PullRequests []*wirePull `json:"pull_requests"`
	Deployment   *struct {
		SHA string `json:"sha"`
		Ref string `json:"ref"`
	} `json:"deployment"`
}

func (p *deploymentRulePayload) fill(ev *Event) {
	d := events.DeploymentRequested{Environment: p.Environment, SHA: p.SHA, Ref: p.Ref, RunID: CallbackRun(p.CallbackURL)}
	if ev.Sender.Login != "" {
		d.Sender = ev.Sender.Login
	}
	if p.Deployment != nil {
		// sha and ref are in GitHub's OpenAPI description, not in every
		// schema of the event; the deployment carries them too.
		if d.SHA == "" {
			d.SHA = p.Deployment.SHA
		}
		if d.Ref == "" {
			d.Ref = p.Deployment.Ref
		}
	}
	for _, pr := range p.PullRequests {
		if pr == nil || pr.Number <= 0 {
			continue
		}
		linked := LinkedIssues(pr.Body)
		d.PRs = append(d.PRs, events.DeployPR{Number: pr.Number, LinkedIssues: linked})
		for _, n := range linked {
			if !containsInt(ev.LinkedIssues, n) {
				ev.LinkedIssues = append(ev.LinkedIssues, n)
			}
		}
	}
	ev.Carries = d
}

func (p *deploymentRulePayload) check(ev *Event) error {
	switch {
	case ev.Repo == "":
		return missing(ev.Name, "repository.full_name")
	case p.Environment == "":
		return missing(ev.Name, "environment")
	case CallbackRun(p.CallbackURL) == 0:
		return missing(ev.Name, "deployment_callback_url (…/actions/runs/{run_id}/deployment_protection_rule)")
	}
	return nil
}

// CallbackRun is the workflow run id a deployment_callback_url names
// (…/actions/runs/{run_id}/deployment_protection_rule), 0 when it names
// none.
func CallbackRun(url string) int64 {
	_, rest, ok := strings.Cut(url, "/actions/runs/")
	if !ok {
		return 0
	}
	num, tail, _ := strings.Cut(rest, "/")
	if tail != "deployment_protection_rule" {
		return 0
	}
	id, err := strconv.ParseInt(num, 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

func containsInt(ns []int, n int) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

func (p *deploymentRulePayload) carried() events.Event { return events.DeploymentRequested{} }
