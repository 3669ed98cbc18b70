// Package events holds the engine's inputs: the Event types Apply takes,
// the evidence they carry and the queries the engine asks to get them.
// They are plain data; the engine re-exports them under its own name.
package events

import (
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Event is an input to the engine.
type Event interface{ eventName() string }

// Name is the event's name, which keys its row in the engine's handler
// table.
func Name(ev Event) string { return ev.eventName() }

// Start: the trigger label was added.
type Start struct {
	// Issue is the issue number the run belongs to; it appears in the first
	// step's announcement, prompt and dispatch inputs.
	Issue int
	// Flow is the flow to run; empty means choose among Candidates.
	Flow       string
	Candidates []string
	// Actor started the run; empty when the sweep found the label.
	Actor string
	Title string
	Body  string
	URL   string
	// SeqFloor is the highest marker number already used on the issue (a
	// run started over after its state was lost): new markers go above it,
	// so they never collide with an earlier run's comments.
	SeqFloor int64
}

// LabelRemoved: the trigger label was removed (user-abort).
type LabelRemoved struct{ Actor string }

// Closed: the issue was closed.
type Closed struct{ Actor string }

// Comment is a human (or agent) comment on the issue or a linked PR.
type Comment struct {
	ID     int64
	Author string
	Bot    bool
	// Agent: the author is a configured agent account (executor reports count).
	Agent bool
	// Perm is the author's permission from the collaborator-permission API,
	// looked up for humans and agents alike; empty means not looked up.
	Perm access.Level
	// PermErr: the permission lookup failed; the comment is deferred (fail closed).
	PermErr bool
	Body    string
	// Reply is Body as the caller parsed it (once per pass); nil: the
	// engine parses Body.
	Reply *grammar.Result
	// Replied: the bot's reply to this comment is on the thread.
	Replied bool
	At      time.Time
	URL     string
	OnPR    int
	// Declared holds epics/tasks parsed from autopilot-epics/-tasks blocks.
	Declared    []state.Task
	DeclaredErr string
	// DeclaredTooLarge, when set, says why the declared tasks cannot fit
	// in the state comment and what would (measured by the caller, which
	// renders); the report is refused with it and nothing is recorded.
	DeclaredTooLarge string
	// GatePostedAt is when the open gate's comment appeared (GitHub clock),
	// zero when unknown; answers older than it are stale.
	GatePostedAt time.Time
	// EditUnproven: the comment was edited before it was processed
	// (updated_at differs from created_at) and nothing shows that its
	// author wrote the current text (GitHub's REST API does not say who
	// edited a comment; an issue_comment.edited delivery sent by the
	// author is the proof). Such a comment is refused once, never applied.
	EditUnproven bool
}

// Review is a submitted review on a linked PR.
type Review struct {
	ID       int64
	PR       int
	PRAuthor string
	Reviewer string
	Perm     access.Level
	PermErr  bool
	State    string // APPROVED, CHANGES_REQUESTED, COMMENTED
	Body     string
	At       time.Time
	URL      string
	// CommitSHA is the commit the review was given on (commit_id).
	CommitSHA string
	// Pull is the PR as read when the review was handled; nil when it
	// was not read (the review is then no evidence).
	Pull *evidence.PullFacts
}

// Checks reports the check state of a linked PR's head.
type Checks struct {
	PR     int
	SHA    string
	State  string // success, failure, pending
	Failed []string
	URL    string
	// IDs are the check runs and commit statuses read on SHA.
	IDs []int64
	// Pull is the PR as read with its checks; nil means not read (the
	// checks are then no evidence).
	Pull *evidence.PullFacts
}

// RunCompleted: a dispatched workflow run finished. Only the recorded run
// id completes the step; the fields after URL are what the session-token
// fallback checks when no run id was recorded (see MatchRun).
type RunCompleted struct {
	RunID        int64
	DisplayTitle string
	Conclusion   string
	URL          string
	// Path is the run's workflow file (workflow_run.path, e.g.
	// ".github/workflows/autopilot-step.yml").
	Path string
	// Event is what triggered the run (workflow_run.event).
	Event string
	// HeadRepo is workflow_run.head_repository.full_name: a fork's name
	// for runs on a fork's branch.
	HeadRepo string
	// CreatedAt is workflow_run.created_at (GitHub's clock).
	CreatedAt time.Time
}

// Dispatched reports the outcome of a dispatch effect.
type Dispatched struct {
	Session string
	RunID   int64
	Err     string
}

// TrackerAuth reports the outcome of the Jira authentication check.
type TrackerAuth struct {
	OK     bool
	Detail string
}

// TrackerSynced reports an outbox sync (or the moves to done when the issue
// closed).
type TrackerSynced struct {
	Tasks  []state.Task
	Paused string // "auth" when a 401 paused the sync
	Note   string
	// RetryAt is the end of a Retry-After window reported by the sync.
	RetryAt time.Time
	// Enable: the sync runs at an explicit request (SyncPlan.Enable),
	// which turns Jira back on.
	Enable bool
	// Closing: the tasks were being moved to done (the issue closed);
	// Left of them are still open.
	Closing bool
	Left    int
}

// Tick is the periodic sweep: timeouts and wall-clock limits.
type Tick struct {
	// BudgetLow: the API budget is nearly spent (resource-overload).
	BudgetLow bool
}

// PRLinked: a PR whose body links this issue was opened or edited.
type PRLinked struct {
	PR  int
	URL string
	// Edit is set for a pull_request opened or edited delivery: who wrote
	// the description (a link vouched for, see PullEdit).
	Edit *evidence.PullEdit
}

func (Start) eventName() string         { return "start" }
func (LabelRemoved) eventName() string  { return "label-removed" }
func (Closed) eventName() string        { return "closed" }
func (Comment) eventName() string       { return "comment" }
func (Review) eventName() string        { return "review" }
func (Checks) eventName() string        { return "checks" }
func (RunCompleted) eventName() string  { return "run-completed" }
func (Dispatched) eventName() string    { return "dispatched" }
func (TrackerAuth) eventName() string   { return "jira-auth" }
func (TrackerSynced) eventName() string { return "jira-synced" }
func (Tick) eventName() string          { return "tick" }
func (PRLinked) eventName() string      { return "pr-linked" }

// PermAsker is an event the engine gives back to be applied again once
// the permissions it asks for are known (QPerms).
type PermAsker interface {
	Event
	// WithPerms returns the event with perms (by login) added.
	WithPerms(perms map[string]evidence.PermRead) Event
}

// ConfigRead: the repository configuration was read through the API this
// pass; the state keeps its text (small enough), so later events need not
// read it again.
type ConfigRead struct{ YAML string }

// Refused: GitHub refused a request with 422 (named by its fingerprint);
// it is given up, and the state remembers it so no later pass sends it
// again unchanged.
type Refused struct{ Request string }

func (ConfigRead) eventName() string { return "config-read" }
func (Refused) eventName() string    { return "refused" }

// Recovered reports what loading an issue found wrong with its state
// comment; the engine says so once (each notice's marker is fixed).
type Recovered struct {
	// Restored: the human part of state comment Comment was edited; its
	// signed machine block (version Version) is the state and is written
	// back.
	Restored bool
	Comment  int64
	Version  int64
	// Lost: no state verifies although the labels say a run existed
	// (Deleted) or a state comment no longer verifies.
	Lost    bool
	Deleted bool
}

// Unmanaged is a comment on an issue autopilot does not manage. An
// /autopilot command from someone with answer_permission is told how to
// start a run, once (the reply's marker is keyed by the comment).
type Unmanaged struct {
	ID     int64
	Author string
	Bot    bool
	Body   string
	// Perms holds the author's permission once looked up (QPerms).
	Perms map[string]evidence.PermRead
}

func (Recovered) eventName() string { return "recovered" }
func (Unmanaged) eventName() string { return "unmanaged" }

// WithPerms adds looked-up permissions (QPerms).
func (e Unmanaged) WithPerms(perms map[string]evidence.PermRead) Event {
	e.Perms = withPerms(e.Perms, perms)
	return e
}

// PullSeen records a linked PR as read: its head and whether it is trusted
// there. A new head starts with nothing shown.
type PullSeen struct{ Pull *evidence.PullFacts }

// CheckShown records the hash of the check run published on a PR's head.
// Pending: creating it failed transiently; a later pass creates it.
type CheckShown struct {
	PR      int
	Head    string
	Hash    string
	Pending bool
}

// Click is a requested action of the PR check (check_run.requested_action,
// App mode): an answer like a comment.
type Click struct {
	// Identifier is requested_action.identifier (checkview.GateToken + "." + letter).
	Identifier string
	Sender     string
	// Perm is the sender's collaborator permission; PermErr: the lookup
	// failed (the click is dropped: fail closed).
	Perm    access.Level
	PermErr bool
	// URL is the check run's page (the decision's link).
	URL string
	At  time.Time
}

func (PullSeen) eventName() string   { return "pull-seen" }
func (PullRead) eventName() string   { return "pull-read" }
func (CheckShown) eventName() string { return "check-shown" }
func (Click) eventName() string      { return "click" }

// PullRead answers QCheckPR: a linked PR as read now, its reviews and,
// when the step waits for checks, the check runs on its head. The engine
// decides what counts: which reviews are evidence of this execution and
// what the checks add up to. A review that counts needs its reviewer's
// permission; the engine asks for the ones Perms lacks (QPerms) and is
// given the read again with them.
type PullRead struct {
	// Pull holds the trusted-PR facts (author permission, approvals).
	Pull *evidence.PullFacts
	// URL is the PR's page.
	URL     string
	Reviews []evidence.ReviewRead
	// Checks are the check runs and commit statuses on the head (nil
	// when the step does not wait for checks).
	Checks []evidence.CheckRead
	// Perms are the reviewers' permissions asked for, by login as given.
	Perms map[string]evidence.PermRead
}

// WithPerms adds looked-up permissions (QPerms).
func (e PullRead) WithPerms(perms map[string]evidence.PermRead) Event {
	e.Perms = withPerms(e.Perms, perms)
	return e
}

func withPerms(have, add map[string]evidence.PermRead) map[string]evidence.PermRead {
	out := make(map[string]evidence.PermRead, len(have)+len(add))
	for k, v := range have {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

// QueryKind says what the engine needs answered before it can go on.
type QueryKind int

// The queries and the events that answer them.
const (
	// QTrackerAuth: check the tracker's credentials; answer TrackerAuth.
	QTrackerAuth QueryKind = iota + 1
	// QTrackerSync: run the tracker outbox (Query.Jira says why);
	// answer TrackerSynced.
	QTrackerSync
	// QCheckPR: read linked PR Query.PR, its reviews and, when Evidence
	// says so, its checks; answer PullRead.
	QCheckPR
	// QPerms: look up the permissions of Query.Logins; answer
	// Query.Then.WithPerms(them).
	QPerms
	// QTrackerClose: move the tasks' tracker issues to done (the issue is
	// closed and the configuration asks for it); answer TrackerSynced with
	// Closing set.
	QTrackerClose
)

func (k QueryKind) String() string {
	switch k {
	case QTrackerAuth:
		return "jira-auth"
	case QTrackerSync:
		return "jira-sync"
	case QCheckPR:
		return "check-pr"
	case QPerms:
		return "perms"
	case QTrackerClose:
		return "jira-close"
	case QApprovers:
		return "approvers"
	case QDeployApprovals:
		return "deploy-approvals"
	}
	if s, ok := readKindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("query(%d)", int(k))
}

// MarshalText names the kind (logs, transcripts).
func (k QueryKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Query is a question the engine asks its caller (Result.Queries).
type Query struct {
	Kind   QueryKind
	PR     int        // QCheckPR
	Jira   SyncReason // QTrackerSync
	Logins []string   // QPerms
	Then   PermAsker  `json:"-"` // QPerms: the event to give again
	// Dir is the directory a QTaskFiles reads.
	Dir string `json:",omitempty"`
	// Approvers is what a QApprovers query asks.
	Approvers *ApproversAsk `json:",omitempty"`
	// RunID is the workflow run a QDeployApprovals reads.
	RunID int64 `json:",omitempty"`
}

// AnswerPerms answers a QPerms query: the asking event again, with each
// login's permission as look reads it; a failed lookup is kept as
// PermRead.Err, which the engine treats as no permission (fail closed).
func (q Query) AnswerPerms(look func(login string) (access.Level, error)) Event {
	perms := make(map[string]evidence.PermRead, len(q.Logins))
	for _, login := range q.Logins {
		p, err := look(login)
		perms[login] = evidence.PermRead{Perm: p, Err: err != nil}
	}
	return q.Then.WithPerms(perms)
}

// SyncPlan is whether a pass runs the tracker outbox (engine/tasksync) and
// how (outbox.PlanSync decides).
type SyncPlan struct {
	Run bool
	// Retry: also resend the tasks the tracker rejected.
	Retry bool
	// Enable: an explicit request turns Jira back on (after "Continue
	// without Jira"); the sync reports it (TrackerSynced.Enable).
	Enable bool
	// Unconfigured: a sync was asked for and no tracker is configured.
	Unconfigured bool
}

// SyncReason is why the engine asks for a tracker sync.
type SyncReason string

const (
	// SyncAuto: tasks were declared, or the authentication check passed.
	SyncAuto SyncReason = ""
	// SyncAsked: `/autopilot tasks sync` (or its alias `jira sync`).
	SyncAsked SyncReason = "sync"
	// SyncRetry: `/autopilot tasks retry` (or `jira retry`), which also resends rejected tasks.
	SyncRetry SyncReason = "retry"
)
