// Package tasksync holds every rule of moving an issue's tasks into a task
// tracker and back (PRODUCT §10), for every tracker: which tasks are looked
// up by idempotency key, when a create whose answer was lost is sent again
// (the search lag), epics before their tasks, a task whose epic failed is
// created unlinked, creates in chunks of at most MaxBulk with the "sending"
// mark persisted before each batch, dependency links, the retry windows,
// reading back statuses, and the close policy.
//
// It is pure: no I/O, no clock. A machine (Sync, Close) names the next
// tracker operation as a typed Op; the carrier performs it against the
// tracker's port and feeds the typed Outcome back with Apply, until Next
// returns nil. The tracker packages only map their API answers to an
// outcome Class.
package tasksync

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Op is one thing the carrier must do next: Lookup, Persist, Create,
// LinkDep, ReadStatuses, CloseIssue, Wait or Recall.
type Op interface{ isOp() }

// Lookup searches the tracker for issues carrying these idempotency keys.
type Lookup struct{ IdemKeys []string }

// Persist writes the tasks to the state before anything more is sent
// (they carry the "sending" marks of the creates that follow).
type Persist struct{ Tasks []state.Task }

// Create creates these items in one bulk request (at most MaxBulk).
type Create struct{ Items []Item }

// LinkDep records that issue Key is blocked by issue Blocker.
type LinkDep struct{ Key, Blocker string }

// ReadStatuses reads the current status of these issues.
type ReadStatuses struct{ Keys []string }

// CloseIssue moves one issue to done (done already is success).
type CloseIssue struct{ Key string }

// Wait sits out a rate limit or a backoff before the same request is sent
// again; a Wait that cannot finish (cancelled) is answered with Canceled.
type Wait struct{ D time.Duration }

// Recall reads what the tracker remembers across calls (remarks, a limit
// window it met), answered with Outcome.Extras: the last op of a sync or a
// close, whose Result it completes (engine/pass hands it out once Next
// returns nil).
type Recall struct{}

func (Lookup) isOp()       {}
func (Recall) isOp()       {}
func (Persist) isOp()      {}
func (Create) isOp()       {}
func (LinkDep) isOp()      {}
func (ReadStatuses) isOp() {}
func (CloseIssue) isOp()   {}
func (Wait) isOp()         {}

// Item is one epic or task to create.
type Item struct {
	IdemKey     string
	Kind        state.TaskKind // state.KindEpic or state.KindTask
	Title       string
	Description string
	EpicKey     string  // tracker key of its epic, if any
	Points      float64 // 0: unset
	DependsOn   []string
}

// Issue is what the tracker reports about one issue.
type Issue struct {
	Key    string
	Status string
	Done   bool
	URL    string
	// Gone is state.IssueDeleted, IssueNotFound or IssueTransferred for an
	// issue followed no more; Remark says more for people.
	Gone   string
	Remark string
}

// Class is how an answer of the tracker counts.
type Class int

const (
	// OK: the request did what it asked.
	OK Class = iota
	// Auth: the credentials were refused (401/403); never retried.
	Auth
	// RateLimited: 429 or a secondary limit; nothing was processed.
	RateLimited
	// Transient: 5xx, a timeout, a broken connection; for a create the
	// outcome is unknown.
	Transient
	// Rejected: the tracker refused the request for good (400, 422).
	Rejected
	// Gone: the issue is deleted (410), not found (404) or moved (301).
	Gone
	// NoDependencies: the host has no dependency links.
	NoDependencies
	// Canceled: the run ended before the answer (or the wait) was in.
	Canceled
	// Other: an error the tracker package could not classify.
	Other
)

// Refusal is a request's failure, classified by the tracker package.
type Refusal struct {
	Class      Class
	RetryAfter time.Duration // RateLimited, Transient: what the tracker asked
	Reason     string        // RateLimited: the tracker's reason, if any
	Status     int           // HTTP status, if any
	Gone       string        // Gone: state.IssueDeleted, IssueNotFound, IssueTransferred
	Msg        string        // the error for people, naming the tracker
}

func (r *Refusal) Error() string { return r.Msg }

// ItemResult is one item's outcome in a Create.
type ItemResult struct {
	IdemKey string
	Issue   Issue
	Err     *Refusal // nil: created
}

// Outcome answers the last Op.
type Outcome struct {
	// At is the carrier's clock when the answer came in.
	At time.Time
	// Jitter is a number in [0, 1) drawn by the carrier, spreading backoffs.
	Jitter float64
	// Err is nil on success.
	Err *Refusal
	// Failed answers a Persist that did not stand: the sync ends with it.
	Failed error
	// Found answers Lookup (by idempotency key) and ReadStatuses (by key).
	Found map[string]Issue
	// Results answer Create, matched by IdemKey; an item missing has an
	// unknown outcome.
	Results []ItemResult
	// Extras answer Recall.
	Extras Extras
}

// Extras is what a tracker remembers across calls, read once at the end.
type Extras struct {
	// Remarks by idempotency key (an impostor issue ignored, a link refused).
	Remarks map[string]string
	// LimitedUntil is the end of a rate-limit window the tracker met.
	LimitedUntil time.Time
}
