// Package state holds the workflow state of one issue: its types, their
// schema (Valid), gate actions and effects. Package state/codec writes and
// reads it as the state comment (human-readable Markdown plus a machine
// block of base64 JSON, optionally HMAC-signed); the machine block is the
// truth. This package never does I/O.
package state

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/state/marker"
)

// SchemaVersion is the machine block's schema version. Schema 2 renamed
// the tracker fields that schema 1 named after Jira (jira_enabled,
// tasks[].jira_key, ...); package codec still reads schema 1.
const SchemaVersion = 2

// Marker is the first line of every state comment.
const Marker = marker.Prefix + marker.State + marker.Suffix

// StepStatus is the status of a step (State.Status, StepProgress.Status),
// as in the seeds.
type StepStatus string

// Step status values, as in the seeds.
const (
	NotStarted StepStatus = "not_started"
	InProgress StepStatus = "in_progress"
	Completed  StepStatus = "completed"
	Skipped    StepStatus = "skipped"
	Failed     StepStatus = "failed"
)

// RunStatus is the run status behind the label autopilot/status:<s>
// (State.Run, Stop.Resume).
type RunStatus string

// Run status values; each maps to the label autopilot/status:<s>.
const (
	RunInProgress       RunStatus = "in-progress"
	RunAwaitingDecision RunStatus = "awaiting-decision"
	RunFailed           RunStatus = "failed"
	RunDone             RunStatus = "done"
	RunStopped          RunStatus = "stopped"
)

// State is everything autopilot knows about one issue's run.
type State struct {
	Schema  int    `json:"schema"`
	Version int64  `json:"version"`
	Repo    string `json:"repo"`
	Issue   int    `json:"issue"`
	Title   string `json:"title,omitempty"`

	Flow   string     `json:"flow"`
	Step   int        `json:"step"` // 1-based index into the flow's steps; 0 when done
	Slug   string     `json:"slug"` // current step slug ("done" when finished)
	Name   string     `json:"name"` // current step display name
	Status StepStatus `json:"status"`
	// Run is the run status behind the autopilot/status:<s> label.
	Run        RunStatus `json:"run"`
	SubStep    SubStep   `json:"sub_step"`
	RetryCount int       `json:"retry_count"`
	Cycle      int       `json:"cycle"`

	// Steps holds per-step progress for the status banner, in flow order.
	Steps []StepProgress `json:"steps"`

	Completed []CompletedStep `json:"completed,omitempty"`
	// CompletedFolded counts the oldest Completed rows folded away (a run
	// that loops for months keeps the newest rows; see reconcile).
	CompletedFolded int        `json:"completed_folded,omitempty"`
	Decisions       []Decision `json:"decisions,omitempty"`
	// DecisionsArchived counts the oldest decisions moved to archive
	// comments (Archives lists the newest of those); Decisions holds the
	// rest, numbered from DecisionsArchived+1.
	DecisionsArchived int               `json:"decisions_archived,omitempty"`
	Archives          []DecisionArchive `json:"archives,omitempty"`
	LastSession       Session           `json:"last_session"`
	RetryLog          []RetryEntry      `json:"retry_log,omitempty"`
	Blockers          []string          `json:"blockers,omitempty"`
	Tasks             []Task            `json:"tasks,omitempty"`

	// TrackerEnabled is nil until the tracker gate (the authentication
	// check before the first task step) has been passed or declined.
	TrackerEnabled *bool `json:"tracker_enabled,omitempty"`
	// TrackerOff says why no tracker is used for this run without anyone
	// having been asked (TrackerNotConfigured); its tasks are then SyncLocal.
	TrackerOff  string `json:"tracker_off,omitempty"`
	TrackerNote string `json:"tracker_note,omitempty"` // e.g. "paused: 401" shown once
	// TrackerRetryAt is the end of the tracker's Retry-After window: no
	// tracker request is sent before it, whichever run comes next.
	TrackerRetryAt time.Time `json:"tracker_retry_at,omitempty"`
	// Tracker is "github" once someone chose "Create the tasks as GitHub
	// sub-issues instead" at the Jira authentication gate: the tasks then go
	// to sub-issues whatever the config says.
	Tracker Tracker `json:"tracker,omitempty"`
	// BackgroundHeld: the sweep's last pass of the issue was cut by the
	// installation's GitHub budget (App mode); nil once a sweep pass went
	// through.
	BackgroundHeld *BackgroundHold `json:"background_held,omitempty"`
	// TrackerInUse is where this run's tasks go as the last write saw it
	// (TrackerJira, TrackerGitHub, TrackerLocal or another registered
	// tracker's name, RegisterTracker): the config's tracker, or GitHub
	// after the answer above. The state comment names it (TrackerLabel).
	TrackerInUse Tracker `json:"tracker_in_use,omitempty"`

	Gate *Gate `json:"gate,omitempty"`

	// Ledger records how every human comment was classified, by comment id.
	Ledger []LedgerEntry `json:"ledger,omitempty"`
	// LedgerFloor folds the oldest ledger entries (a thread that lives
	// for months): every comment id at or below it was classified, and
	// only entries above it (and applied ones) are listed. GitHub's
	// comment ids grow with time, and the floor stays below every comment
	// still unhandled.
	LedgerFloor int64 `json:"ledger_floor,omitempty"`
	// Replies records one-off replies already owed or sent, by marker, so a
	// user gets at most one explanation per gate.
	Replies []string `json:"replies,omitempty"`
	// Outbox holds side effects announced by the last state write and not yet
	// confirmed done; reconcile performs them idempotently (by marker).
	Outbox []Effect `json:"outbox,omitempty"`

	Stop   *Stop  `json:"stop,omitempty"`
	Limits Limits `json:"limits"`

	// Review-loop fields (seed 003).
	Review *ReviewLoop `json:"review,omitempty"`

	// Exec tracks the executor of the current step (dispatch run ids etc.).
	Exec *Execution `json:"exec,omitempty"`

	LinkedPRs []int `json:"linked_prs,omitempty"`
	// Deploys are the deployment protection-rule requests answered or
	// asked about for this issue (App mode's deploy gate), newest last.
	Deploys []DeployRequest `json:"deploys,omitempty"`
	// LinkVouches: linked PRs whose link a person with answer_permission
	// made (PRODUCT §8), one per PR.
	LinkVouches []LinkVouch `json:"link_vouches,omitempty"`
	// PRChecks records, per linked PR, the head the bot last read, whether
	// the PR was trusted there, and a hash of what its check run last
	// showed (an unchanged hash costs no API call).
	PRChecks []PRCheck `json:"pr_checks,omitempty"`
	// ConfigYAML is the repository configuration read at the start or the
	// last sweep (ConfigRead: it was read; empty text means defaults).
	ConfigYAML string `json:"config_yaml,omitempty"`
	ConfigRead bool   `json:"config_read,omitempty"`
	// Since is the thread's watermark (GitHub's clock): every comment last
	// updated before it was read by an earlier pass, so the next pass lists
	// only the comments updated since (plus the first page, which holds
	// this comment). Zero: read the whole thread.
	Since time.Time `json:"since,omitzero"`
	// Seq numbers the markers of posted comments so each is unique.
	Seq int64 `json:"seq"`
	// PendingAuthCheck is set while the tracker's authentication check is owed.
	PendingAuthCheck bool `json:"pending_auth_check,omitempty"`
	// FailedSessions counts, per step slug, the sessions in which the step
	// escalated (circuit breaker across sessions).
	FailedSessions map[string]int `json:"failed_sessions,omitempty"`
	// Refused fingerprints requests GitHub refused with 422 (validation),
	// so no later run sends them again unchanged (newest last, bounded).
	Refused []string `json:"refused,omitempty"`
	// WriteID is random per state write: two runs that compute the same
	// state still write different bodies, so reading the comment back tells
	// which write stands (GitHub has no compare-and-swap).
	WriteID   string    `json:"write_id,omitempty"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Sig is the HMAC over repo, issue, version and content (hex), set by the
	// codec when a key is configured. It is not part of the signed content.
	Sig string `json:"sig,omitempty"`
}

// MaxRefused bounds State.Refused; the oldest fingerprints are dropped.
const MaxRefused = 20

// DeclareBudget is the largest machine block a task declaration may leave
// (characters): the rest of textsafe.SafeBody is headroom for what a run
// keeps adding afterwards (ledger, decisions, notes, the human part's
// shortest form), so a state that accepted a declaration still renders.
const DeclareBudget = 40000

// SubStep is the structured sub-step of seed 001.
type SubStep struct {
	Phase  int    `json:"phase"`
	Name   string `json:"name"` // kebab-case; "awaiting-invocation" with phase 0
	Detail string `json:"detail"`
}

// AwaitingInvocation is the reserved sub-step name for "chained, not started".
const AwaitingInvocation = "awaiting-invocation"

// StepProgress is one row of the status banner.
type StepProgress struct {
	Slug    string     `json:"slug"`
	Status  StepStatus `json:"status"`
	Retries int        `json:"retries,omitempty"`
	Note    string     `json:"note,omitempty"` // e.g. "5 tasks", "batch 2 of ~4"
	// Declared: Note counts declared tasks and outlives completion.
	Declared bool `json:"declared,omitempty"`
}

// CompletedStep is a row of the Completed Steps table.
type CompletedStep struct {
	Step    int       `json:"step"`
	Slug    string    `json:"slug"`
	Name    string    `json:"name"`
	At      time.Time `json:"at"`
	Outcome string    `json:"outcome"`
	Cycle   int       `json:"cycle,omitempty"`
}

// Decision is an answered Choose block.
type Decision struct {
	Gate       string    `json:"gate"`
	Question   string    `json:"question"`
	Option     string    `json:"option"` // letter
	OptionText string    `json:"option_text"`
	By         string    `json:"by"`
	At         time.Time `json:"at"`
	Link       string    `json:"link"`
	CommentID  int64     `json:"comment_id"`
	Reason     string    `json:"reason,omitempty"`
	// GateOpenedAt lets a late second answer be told "already decided".
	GateOpenedAt time.Time `json:"gate_opened_at"`
}

// Session is the Last Session section.
type Session struct {
	Date    time.Time `json:"date"`
	EndedAt string    `json:"ended_at"`
	Reason  string    `json:"reason"`
	Notes   string    `json:"notes"`
}

// RetryEntry is a Retry Log row.
type RetryEntry struct {
	Attempt int       `json:"attempt"`
	Step    int       `json:"step"`
	Name    string    `json:"name"`
	SubStep string    `json:"sub_step"`
	Reason  string    `json:"reason"`
	At      time.Time `json:"at"`
}

// TaskKind says whether a task is an epic or a task (Task.Kind).
type TaskKind string

// Task kinds.
const (
	KindEpic TaskKind = "epic"
	KindTask TaskKind = "task"
)

// SyncState is a task's tracker sync state (Task.Sync), whatever the
// tracker.
type SyncState string

// Tracker sync states of a task (Task.Sync), whatever the tracker.
const (
	SyncPending SyncState = "pending" // not yet sent (or the tracker is disabled)
	SyncSending SyncState = "sending" // idempotency key recorded, create sent, outcome unknown
	SyncCreated SyncState = "created" // tracker key known
	SyncFailed  SyncState = "failed"  // rejected by the tracker (validation); needs a human
	SyncLocal   SyncState = "local"   // kept in the issue only: no tracker (State.TrackerOff)
)

// TrackerNotConfigured is State.TrackerOff when no tracker is set up: the
// config says tracker: local, or nothing (no jira_* input, no jira:
// section) configures one.
const TrackerNotConfigured = "not-configured"

// Task is an epic or task, kept locally and synced to the tracker.
type Task struct {
	ID          string   `json:"id"` // "01", "02", ... (local numbering)
	Kind        TaskKind `json:"kind"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Epic        string   `json:"epic,omitempty"` // title or local id of the epic
	DependsOn   []string `json:"depends_on,omitempty"`
	// DepsLinked are the depends_on entries whose link the tracker holds
	// (GitHub's blocked_by); the others are still owed, sent in a later run.
	DepsLinked []string `json:"deps_linked,omitempty"`
	Points     float64  `json:"points,omitempty"`
	Step       string   `json:"step,omitempty"` // step slug that declared it
	// IdemKey is recorded before the create and stored on the tracker's
	// issue (a Jira label, a sub-issue's hidden marker).
	IdemKey   string    `json:"idem_key"`
	Sync      SyncState `json:"sync"`          // sync state (SyncPending...)
	Key       string    `json:"key,omitempty"` // the tracker's key: PROJ-12 (Jira) or #12 (sub-issue)
	URL       string    `json:"url,omitempty"`
	SentAt    time.Time `json:"sent_at,omitempty"` // when the create was sent
	Done      bool      `json:"done,omitempty"`
	Error     string    `json:"error,omitempty"`
	Carryover bool      `json:"carryover,omitempty"`
	// Gone says what became of the task's tracker issue when it is followed
	// no more: IssueDeleted, IssueNotFound or IssueTransferred. Only that
	// task is affected; the others go on.
	Gone string `json:"gone,omitempty"`
	// Remark is what the tracker had to say about this task alone, for
	// people: where a transferred issue went, a link GitHub refused for
	// good, an issue carrying the task's marker that another account wrote.
	Remark string `json:"remark,omitempty"`
}

// What became of a task's tracker issue (Task.Gone).
const (
	IssueDeleted     = "deleted"     // GitHub answered 410 Gone
	IssueNotFound    = "not-found"   // 404: deleted, or out of the token's sight
	IssueTransferred = "transferred" // 301: moved to another repository
)

// Closable reports whether t has a tracker issue that is not known to be
// done: one that moves to done when the GitHub issue closes.
func (t Task) Closable() bool {
	return t.Sync == SyncCreated && t.Key != "" && !t.Done && t.Gone == ""
}

// Option is one choice of a Choose block.
type Option struct {
	Letter string `json:"letter"`
	Text   string `json:"text"`
	// Action is what the engine does when the option is chosen.
	Action Action `json:"action"`
}

// Gate is an open Choose block waiting for an answer.
type Gate struct {
	ID        string    `json:"id"`
	Kind      GateKind  `json:"kind"`
	Title     string    `json:"title"` // e.g. "DECISION REQUIRED: ..." or "SKILL FAILED: ..."
	Details   []string  `json:"details,omitempty"`
	Options   []Option  `json:"options"`
	Recommend string    `json:"recommend"`
	Reason    string    `json:"reason"`
	OpenedAt  time.Time `json:"opened_at"`
	CommentID int64     `json:"comment_id,omitempty"`
	// Next is the step an answer starts; the gate already announced it, so
	// a manual executor gets no second announcement.
	Next string `json:"next,omitempty"`
	// Ballot holds the votes and deadlines of a gate with an approver
	// policy (nil without one).
	Ballot *Ballot `json:"ballot,omitempty"`
}

// Letters returns the gate's option letters, e.g. "ABC".
func (g *Gate) Letters() string {
	s := ""
	for _, o := range g.Options {
		s += o.Letter
	}
	return s
}

// Option returns the option with the letter, if any.
func (g *Gate) Option(letter string) (Option, bool) {
	for _, o := range g.Options {
		if o.Letter == letter {
			return o, true
		}
	}
	return Option{}, false
}

// LedgerEntry classifies one comment (see LedgerOutcome).
type LedgerEntry struct {
	CommentID int64         `json:"id"`
	Outcome   LedgerOutcome `json:"o"`
}

// PRCheck is the bot's record of the check run on one linked PR's head.
type PRCheck struct {
	PR      int    `json:"pr"`
	Head    string `json:"head"`
	Trusted bool   `json:"trusted,omitempty"`
	// Shown is the hash of the check run last published on Head ("" when
	// none was).
	Shown string `json:"shown,omitempty"`
	// GateHead is the PR's head when the flow's merge gate step last
	// passed: only that head may show success.
	GateHead string `json:"gate_head,omitempty"`
	// Pending: creating the check run for Shown failed transiently (5xx,
	// timeout, rate limit); a later pass creates it and clears the mark.
	Pending bool `json:"pending,omitempty"`
}

// Stop records why a run stopped.
type Stop struct {
	Reason StopReason `json:"reason"` // kill-switch name (engine/stops)
	Hint   string     `json:"hint"`
	At     time.Time  `json:"at"`
	// Resume is the run status to restore on /autopilot resume.
	Resume RunStatus `json:"resume,omitempty"`
}

// Limits tracks the loop limits of seed 004.
type Limits struct {
	Sessions       int       `json:"sessions"`       // executor sessions started
	Iterations     int       `json:"iterations"`     // iteration boundaries passed
	RunStartedAt   time.Time `json:"run_started_at"` // wall-clock start for max_hours
	LastConfidence float64   `json:"last_confidence,omitempty"`
	HasConfidence  bool      `json:"has_confidence,omitempty"`
	FailedWaves    int       `json:"failed_waves,omitempty"`
	Deferred       string    `json:"deferred,omitempty"` // e.g. rate limit note
}

// ReviewLoop holds the review-loop flow fields of seed 003.
type ReviewLoop struct {
	Slug               string             `json:"slug"`
	Snapshot           string             `json:"snapshot"` // link to the context snapshot comment (marker)
	Iteration          int                `json:"iteration"`
	ReviewCycle        int                `json:"review_cycle"`
	MaxIterations      int                `json:"max_iterations"`
	InterviewRationale string             `json:"interview_rationale,omitempty"`
	InterviewSkipped   string             `json:"interview_skipped,omitempty"`
	Architect          *Approval          `json:"architect,omitempty"`
	Critic             *Approval          `json:"critic,omitempty"`
	Handoffs           map[string]Handoff `json:"handoffs,omitempty"`
	ReviewVerdict      *Verdict           `json:"review_verdict,omitempty"`
	QAVerdict          *Verdict           `json:"qa_verdict,omitempty"`
	ReturnToPlanReason string             `json:"return_to_plan_reason,omitempty"`
	FailureHistory     []string           `json:"failure_history,omitempty"`
}

// Approval is one consensus-gate approval.
type Approval struct {
	By   string    `json:"by"`
	At   time.Time `json:"at"`
	Link string    `json:"link"`
	Note string    `json:"note,omitempty"`
}

// Handoff is a phase's recorded handoff: links to the evidence it rests on.
type Handoff struct {
	Summary string    `json:"summary"`
	Links   []string  `json:"links"`
	At      time.Time `json:"at"`
	// PR, HeadSHA, Review and Checks name the evidence a verdict rests on:
	// the pull request, the head commit it was judged at, and the approving
	// review or the check runs (and commit statuses) read there.
	PR      int     `json:"pr,omitempty"`
	HeadSHA string  `json:"head_sha,omitempty"`
	Review  int64   `json:"review,omitempty"`
	Checks  []int64 `json:"checks,omitempty"`
}

// Verdict is a review or QA verdict with the evidence that made it.
type Verdict struct {
	Clean    bool   `json:"clean"`
	Skipped  bool   `json:"skipped,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Evidence string `json:"evidence"` // link to the review / check run
}

// Execution tracks how the current step is being executed.
type Execution struct {
	Executor     string    `json:"executor"`
	Session      string    `json:"session,omitempty"` // session token (run-name)
	Attempt      int       `json:"attempt,omitempty"`
	RunID        int64     `json:"run_id,omitempty"`
	DispatchedAt time.Time `json:"dispatched_at,omitempty"`
	// StartedAt is when the step's execution started; evidence older than
	// it (a review of an earlier cycle) does not count.
	StartedAt time.Time `json:"started_at"`
	Announced bool      `json:"announced,omitempty"`
}

// LinkVouch records that By, who has answer_permission, opened or edited PR
// so that its description links the issue (a pull_request delivery they
// sent said so). Body is 16 hex digits of the SHA-256 of that description:
// the vouch holds only while the description is unchanged.
type LinkVouch struct {
	PR   int    `json:"pr"`
	By   string `json:"by"`
	Body string `json:"body"`
}
