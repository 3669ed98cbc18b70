package state

import "time"

// Ballot is what a gate with an approver policy has collected so far: the
// votes that count, and which of the policy's deadlines were acted on (so
// a retry or a second replica does not act again). The rules are package
// engine/approvals'.
type Ballot struct {
	Votes []Vote `json:"votes,omitempty"`
	// Reminded, Escalated: when the reminder and the escalation were sent.
	Reminded  time.Time `json:"reminded,omitzero"`
	Escalated time.Time `json:"escalated,omitzero"`
	// Expired: the question expired and stopped the run (on_expire:
	// stop); after a resume its clock starts again at Since.
	Expired time.Time `json:"expired,omitzero"`
	Since   time.Time `json:"since,omitzero"`
	// Status is what the banner and the PR check show, as of the state's
	// last write: "1 of 2 approvals: @ada (A) — waiting for one more from
	// @acme/sre; waiting 2 d 4 h; reminder sent; expires in 2 d 20 h".
	Status string `json:"status,omitempty"`
}

// VoteWhere says where a vote was cast.
type VoteWhere string

// Where votes come from.
const (
	VoteComment     VoteWhere = "comment"     // a Choose answer in a comment
	VoteCheck       VoteWhere = "check"       // a PR check button
	VoteEnvironment VoteWhere = "environment" // a deployment environment's review page
)

// Vote is one person's current choice on a gate (a later vote, or an
// edit, replaces it).
type Vote struct {
	By        string    `json:"by"`
	Option    string    `json:"option"`
	Where     VoteWhere `json:"where"`
	At        time.Time `json:"at"`
	CommentID int64     `json:"comment_id,omitempty"`
	Link      string    `json:"link,omitempty"`
	// Evidence is what the vote was judged eligible on, e.g. "member of
	// @acme/sre" or "code owner of src/api/ (@ada)".
	Evidence string `json:"evidence,omitempty"`
}
