package events

import "github.com/autopilot-dev/autopilot/internal/engine/approvals"

// QApprovers: read the facts an approver policy needs to judge a vote
// (Query.Approvers says which); answer Query.Approvers.Answer(facts).
// Its value sits apart from the other kinds so that a kind added to their
// list does not renumber it.
const QApprovers QueryKind = 64

// ApproversAsk is what a QApprovers query asks: GitHub's answers about the
// people around a gate with an approver policy, read now (team membership
// is judged when each vote is applied).
type ApproversAsk struct {
	// Logins are the voters, the one voting now among them, whose team
	// memberships to read.
	Logins []string
	// Teams ("@org/slug") to read each login's membership in; the teams
	// that own files in CODEOWNERS are read as well when CodeOwners is set.
	Teams []string
	// PR is the linked PR (0: none): its author, the pusher of its head
	// and, with CodeOwners, the owners of its changed files in CODEOWNERS
	// at its base branch.
	PR         int
	CodeOwners bool
	// Vote is the comment or click to apply again with the facts.
	Vote Event `json:"-"`
}

// Answer is the event that answers the query: the vote with the facts.
func (a ApproversAsk) Answer(f approvals.Facts) Event { return Voted{Vote: a.Vote, Facts: f} }

// Voted answers QApprovers: a vote (a Comment or a Click) given again with
// the facts its policy is judged on.
type Voted struct {
	Vote  Event
	Facts approvals.Facts
}

func (Voted) eventName() string { return "voted" }

// ChooseShown is what the thread shows of the bot's comments, given once
// a pass after its other events (pass.Node): the text of each comment read,
// by marker, without its version tag. The engine edits the open
// question's Choose comment when it does not show the quorum line the
// state holds (an edit lost to a crash is redone).
type ChooseShown struct {
	Bodies map[string]string
}

func (ChooseShown) eventName() string { return "choose-shown" }
