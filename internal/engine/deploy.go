package engine

import (
	"github.com/autopilot-dev/autopilot/internal/engine/deploygate"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// deploymentRequested applies a deployment protection-rule request routed
// to this issue (or, with no run, to no issue: unmatched). The rule is
// engine/deploygate's: it matches the request to the issue and decides;
// this records the request and makes the answer (machine/deploy.go). In
// App mode autopilot is the environment's protection rule, so a deploy it
// does not gate is answered approved (Decision.Answer), never left
// waiting.
func (m *inputs) deploymentRequested(e events.DeploymentRequested) {
	cfg := m.Set.Config.DeployGate
	req := deploygate.Request{Environment: e.Environment, SHA: e.SHA, Ref: e.Ref, RunID: e.RunID, Session: e.Session}
	for _, pr := range e.PRs {
		req.PRs = append(req.PRs, deploygate.PR{Number: pr.Number, LinkedIssues: pr.LinkedIssues})
	}
	if m.S == nil {
		// No issue matched: answered by deploy_gate.unmatched, with no
		// state to keep (a second answer gets 422, which is success).
		dec := deploygate.DecideUnmatched(cfg, req, deploygate.Matched{Ambiguous: ambiguous(e.Linked)})
		if answer, ok := dec.Answer(); ok {
			m.Emit(state.Effect{Kind: state.EffDeployAnswer, Marker: state.DeployMarker(e.RunID, e.Environment),
				RunID: e.RunID, Environment: e.Environment, Answer: answer, Body: dec.Comment})
		}
		return
	}
	if d := m.S.Deploy(e.RunID, e.Environment); d != nil && (d.Answer != "" || d.Gate != "") {
		return // a redelivery: answered, or its question is open
	}
	matched := deploygate.Match(req, []deploygate.Candidate{deploygate.CandidateOf(m.S)})
	var dec deploygate.Decision
	switch {
	case matched.How != deploygate.ByRun && len(e.Linked) > 1:
		dec = deploygate.DecideUnmatched(cfg, req, deploygate.Matched{Ambiguous: ambiguous(e.Linked)})
	case matched.Issue == 0:
		dec = deploygate.DecideUnmatched(cfg, req, matched)
	default:
		dec = deploygate.Decide(m.S, cfg, req)
	}
	d := m.RecordDeploy(e.RunID, e.Environment, e.SHA)
	// Reviewers on the environment page may have decided already.
	m.Ask(events.Query{Kind: events.QDeployApprovals, RunID: e.RunID})
	switch dec.Verdict {
	case deploygate.Ask:
		m.AskDeploy(d, dec)
	case deploygate.Wait:
		// The question for this commit and environment is open (another
		// run deploying the same commit): this run waits for it too.
		d.Gate = deploygate.Kind(e.Environment, e.SHA)
	default:
		m.AnswerDeploy(d, dec)
	}
}

// ambiguous is the issues a request's pull requests link, when they are
// more than one.
func ambiguous(linked []int) []int {
	if len(linked) > 1 {
		return linked
	}
	return nil
}
