package machine

import (
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// planReported records a plan report, which is not consensus: the
// architect's then the critic's approval must follow it.
func (m *M) planReported() {
	rl := m.S.Review
	rl.Architect, rl.Critic = nil, nil
	m.S.SubStep = state.SubStep{Phase: 1, Name: subArchitect, Detail: "plan reported; needs architect then critic approval"}
	m.Changed = true
	m.Post("announce", "Plan recorded. It needs consensus before execution: an **architect** approval, then a **critic** approval (`/autopilot approve architect|critic [note]`, or an approving review on the linked PR by someone holding the role).")
}

// AwaitingConsensus reports whether a plan report waits for its approvals
// (a rejection needs a new report before approvals count again).
func (m *M) AwaitingConsensus() bool {
	n := m.S.SubStep.Name
	return n == subArchitect || n == subCritic
}

// Sub-steps of the consensus gate.
const (
	subArchitect = "awaiting-architect-review"
	subCritic    = "awaiting-critic-review"
)

// Approve records a role's approval of the plan; the critic's, after the
// architect's, completes the step.
func (m *M) Approve(role, by, link, note string) {
	a := &state.Approval{By: by, At: m.Now, Link: link, Note: prose.OneLine(note, 200)}
	if role == "architect" {
		m.S.Review.Architect = a
		m.S.SubStep = state.SubStep{Phase: 2, Name: subCritic, Detail: "architect approved"}
		m.Changed = true
		return
	}
	m.S.Review.Critic = a
	m.S.Review.ReturnToPlanReason = ""
	m.Handoff("plan-consensus", "architect @"+m.S.Review.Architect.By+" then critic @"+by+" approved", m.S.Review.Architect.Link, link)
	m.Complete("consensus: architect @" + m.S.Review.Architect.By + ", critic @" + by)
}
