package events

// DeploymentRequested: GitHub asks autopilot, as an environment's custom
// deployment protection rule, whether a workflow run may deploy
// (deployment_protection_rule, action requested; docs/deploy-gate.md).
// The engine matches it to the issue (engine/deploygate) and answers it
// with a DeployAnswer effect, a question, or nothing.
type DeploymentRequested struct {
	Environment string
	// SHA and Ref are the commit and ref being deployed.
	SHA, Ref string
	// RunID is the workflow run that deploys: the run id of the payload's
	// deployment_callback_url (…/actions/runs/{run_id}/…).
	RunID int64
	// Session is the session token the run's name carries, when the
	// request was routed by it (a run autopilot dispatched).
	Session string
	// PRs are the pull requests the payload names, with the issues their
	// descriptions link.
	PRs []DeployPR
	// Linked are the autopilot issues (open, with the trigger label) the
	// request was routed through: more than one means its pull requests
	// link several flows (no match, rejected).
	Linked []int
	Sender string
}

// DeployPR is a pull request a deployment request names.
type DeployPR struct {
	Number       int
	LinkedIssues []int
}

// DeployAnswered reports what became of a DeployAnswer effect: the
// callback was taken (Done: 204, or 422 "already decided"), or failed and
// stays owed (Err).
type DeployAnswered struct {
	// Marker is the effect's marker (state.DeployMarker).
	Marker string
	Done   bool
	// AlreadyDecided: GitHub answered 422 (answered before, by this App
	// or a person).
	AlreadyDecided bool
	Err            string
}

func (DeploymentRequested) eventName() string { return "deployment-requested" }
func (DeployAnswered) eventName() string      { return "deploy-answered" }

// QDeployApprovals: read the review history of workflow run Query.RunID
// (reviewers' decisions on the environment page, GET
// …/actions/runs/{run_id}/approvals); answer DeployApprovalsRead.
const QDeployApprovals QueryKind = 80

// DeployApprovalsRead answers a QDeployApprovals: the run's review
// history as GitHub lists it, oldest first, or why the read failed.
type DeployApprovalsRead struct {
	RunID     int64
	Approvals []DeployApproval
	Fail      ReadFail
}

// DeployApproval is one reviewer's decision on the environment page.
type DeployApproval struct {
	Environments []string
	State        string // approved, rejected
	User         string
	Comment      string
}

func (DeployApprovalsRead) eventName() string { return "deploy-approvals-read" }
