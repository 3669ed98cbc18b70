package engine

import (
	"github.com/autopilot-dev/autopilot/internal/engine/deploygate"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// deployReviews records a run's review history from the environment page
// (machine.RecordDeployApprovals) and, when the deploy question those
// reviews concern is open under an approver policy (approvals: {deploy:
// ...}), casts each new review as its reviewer's vote on it (where:
// environment), judged like any vote: the policy says who decides the
// deploy, and a review on the environment page is that person deciding
// it. Without a policy a review is recorded only: GitHub needs the
// reviewers and every protection rule, and the question waits for its
// own answer (docs/deploy-gate.md).
func (m *inputs) deployReviews(e events.DeployApprovalsRead) {
	var votes []machine.DeployReview
	p, policy := m.gatePolicy()
	if policy && m.S.Run == state.RunAwaitingDecision {
		_, reviews := m.NewDeployReviews(e)
		var voters []string
		for _, r := range reviews {
			if r.Gate != "" && r.Gate == m.S.Gate.Kind {
				votes = append(votes, r)
				voters = append(voters, r.User)
			}
		}
		// The facts are read before anything is recorded, so the read
		// given again with them finds the same reviews new.
		if len(votes) > 0 && m.askFacts(p, ballotOf(m.S.Gate), e, voters...) {
			return
		}
	}
	m.RecordDeployApprovals(e)
	for _, v := range votes {
		if m.S.Gate == nil || m.S.Gate.Kind != v.Gate {
			return // decided by an earlier review of this read
		}
		c := events.Comment{Author: v.User, At: m.Now, URL: machine.DeployRunLink(m.Set.Repo, v.RunID)}
		m.vote(c, v.Letter, reviewed[v.Letter], state.VoteEnvironment, e)
	}
}

// reviewed says where a deciding review was given, for the decision's
// reason and the callback.
var reviewed = map[string]string{
	deploygate.LetterApprove: "approved on the environment page",
	deploygate.LetterReject:  "rejected on the environment page",
}
