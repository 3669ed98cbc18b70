// Package tracker is the port of a task tracker (Jira, GitHub sub-issues):
// a small Tracker interface, the optional Closer, DependencyLinker,
// Remarker and Limiter, its error types and their mapping to the outcome
// classes of the outbox rules (Classify), and an in-memory Sandbox tracker
// for `bot demo` and tests.
//
// It decides nothing: which request goes next, retries, waits, adoption
// and the close policy are engine/tasksync's, performed by
// reconcile/trackersync. It never talks to the network itself
// (internal/jira and internal/github do).
package tracker

import (
	"context"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Item is one epic or task to create in the tracker.
type Item struct {
	// IdemKey is the idempotency key, stored on the issue as a label.
	IdemKey string
	// Kind is state.KindEpic or state.KindTask.
	Kind        state.TaskKind
	Title       string
	Description string
	// EpicKey is the tracker key of the epic this task belongs to, if any.
	EpicKey string
	// Points are story points; 0 means unset.
	Points float64
	// DependsOn are the idempotency keys of the tasks this one depends on
	// (the sub-issue tracker records them as dependencies once they exist).
	DependsOn []string
}

// Issue is what the tracker reports about an existing issue.
type Issue struct {
	Key     string
	IdemKey string // the idempotency label found on the issue, if any
	Status  string // status name, e.g. "To Do", "Done"
	Done    bool   // the status is in the "done" category
	URL     string // browse URL for people
	// Gone, when set, is what became of an issue that is followed no more
	// (state.IssueDeleted, IssueNotFound, IssueTransferred); Remark says
	// more for people (where it went). Statuses reports such keys.
	Gone   string
	Remark string
}

// Remarker is implemented by trackers with something to say about single
// tasks (an impostor issue ignored, a link refused for good): the outbox copies
// each remark, by idempotency key, to the task's Remark and notes a new
// one once.
type Remarker interface {
	Remarks() map[string]string
}

// Limiter is implemented by trackers that remember the rate-limit answers
// they got, whatever the call: the outbox and the close policy send no
// request before LimitedUntil and report it as RetryAt, also when the call that met the
// limit had no way to say so.
type Limiter interface {
	LimitedUntil() time.Time
}

// CreateResult is the outcome of one item of a CreateBulk call. Err is nil
// when the issue was created; otherwise the issue was NOT created (the
// tracker said so), and Err is usually a *ValidationError.
type CreateResult struct {
	IdemKey string
	Issue   Issue
	Err     error
}

// DependencyLinker is implemented by trackers whose dependencies are links of
// their own (GitHub's blocked_by), sent once both issues exist: the outbox keeps
// the links still owed in the state and retries them in later runs.
type DependencyLinker interface {
	// LinkDependency records that the issue key is blocked by the issue
	// blocker. A link that already exists is nil; a *ValidationError is a
	// link the tracker refuses for good; ErrNoDependencies means the host
	// has no dependency links (the body says it instead).
	LinkDependency(ctx context.Context, key, blocker string) error
}

// Tracker is what autopilot needs from an issue tracker. Implementations
// return *AuthError, *RateLimitError, *TransientError or *ValidationError so
// that the outbox rules (engine/tasksync) can decide what to do; they never retry or sleep themselves.
type Tracker interface {
	// CheckAuth verifies the credentials: nil when they work, *AuthError on
	// 401/403.
	CheckAuth(ctx context.Context) error
	// FindByIdemKeys searches for issues carrying the given idempotency
	// labels and returns them by key. Search may lag behind creates.
	FindByIdemKeys(ctx context.Context, keys []string) (map[string]Issue, error)
	// CreateBulk creates at most tasksync.MaxBulk items in one request. A non-nil
	// error means the outcome of the whole request is unknown (transient) or
	// known to be nothing created (auth, rate limit, validation); per-item
	// outcomes are in the results, matched by IdemKey. An item missing from
	// the results has an unknown outcome.
	CreateBulk(ctx context.Context, items []Item) ([]CreateResult, error)
	// Statuses reports the current status of issues by tracker key. Keys the
	// tracker does not (yet) know are absent from the map.
	Statuses(ctx context.Context, jiraKeys []string) (map[string]Issue, error)
}

// Closer is implemented by trackers that can move an issue to a status in
// the "done" category (jira.transition_on_close). It is optional: a Tracker
// without it leaves its issues alone when the GitHub issue closes.
type Closer interface {
	// CloseIssue moves the issue to done. An issue already done is success
	// with nothing sent. It returns the Tracker error types; an issue whose
	// workflow offers no way to done is a *ValidationError naming it.
	CloseIssue(ctx context.Context, key string) error
}
