package reliability

import "time"

// ActKind is what a person (or the outside world) does in a scenario.
type ActKind int

// Scenario acts.
const (
	// ActSay posts a comment on the issue (or, with OnPR, on the linked PR).
	ActSay ActKind = iota
	// ActLabel adds the label; ActUnlabel removes it.
	ActLabel
	ActUnlabel
	// ActOpenPR opens a pull request linking the issue ("Fixes #n").
	ActOpenPR
	// ActReview submits a review on the linked PR.
	ActReview
	// ActChecks adds a completed check run on the linked PR's head.
	ActChecks
	// ActJiraOutage makes the fake Jira answer 503 for Outage, starting now.
	ActJiraOutage
)

// Meaning is what a comment means by PRODUCT.md §7, written next to the
// body it is generated with, so the oracle never parses a body itself.
type Meaning int

// Comment meanings.
const (
	// MeanChatter is no command at all (or a quoted one).
	MeanChatter Meaning = iota
	// MeanAnswer picks Letter.
	MeanAnswer
	// MeanAttempt looks like an answer but is not canonical (a lookalike,
	// an invisible character, "A B"): a "did you mean" reply, never a choice.
	MeanAttempt
	// MeanDone, MeanFail, MeanProgress are executor reports.
	MeanDone
	MeanFail
	MeanProgress
	// MeanSkip asks to skip the step (Text is the reason).
	MeanSkip
	MeanStop
	MeanResume
	// MeanStatus and MeanHelp are read-only commands.
	MeanStatus
	MeanHelp
	// MeanApprove and MeanReject are consensus commands (Role).
	MeanApprove
	MeanReject
)

// Act is one thing that happens in a scenario.
type Act struct {
	Kind ActKind
	Who  string
	// Comment acts.
	Body   string
	Mean   Meaning
	Letter string // MeanAnswer
	Text   string // reason / summary / rationale
	Role   string // MeanApprove, MeanReject
	Tasks  int    // tasks (or epics) declared by a MeanDone
	// TaskPrefix starts the declared items' titles (see TaskTitle).
	TaskPrefix string
	OnPR       bool
	Label      string        // ActLabel, ActUnlabel
	Review     string        // ActReview: APPROVED, CHANGES_REQUESTED, COMMENTED
	Outage     time.Duration // ActJiraOutage
	Success    bool          // ActChecks: success or failure

	// Filled in when the act is performed.
	Phase     int
	At        time.Time
	CommentID int64
	ReviewID  int64
	PR        int
}

// Scenario is a run of phases on one issue. Within a phase, acts happen
// without waiting for the bot; between phases the bot has caught up (what
// a person answers depends on what they saw).
type Scenario struct {
	// Flow is "greenfield" or "review-loop".
	Flow string
	// Jira: the world has a fake Jira (greenfield only).
	Jira   bool
	Phases [][]Act
}
