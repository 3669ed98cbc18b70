// Package forge defines the few operations autopilot needs from a code forge
// (GitHub), shaped by what the engine's effects need rather than by the REST
// API's surface. Implementations: the go-github adapter (internal/github) and
// the in-memory sandbox (Sandbox) used by `bot demo` and tests.
//
// A Forge value is bound to one repository. It must never decide anything:
// it reads and writes, and reports errors with the types below so callers can
// tell "retry later" from "give up".
package forge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// User is a GitHub account as seen on a comment, review or event.
type User struct {
	Login string `json:"login"`
	ID    int64  `json:"id,omitempty"`
	// Type is "User", "Bot" or "Organization", as GitHub reports it.
	Type string `json:"type,omitempty"`
}

// IsBot reports whether GitHub marks the account as a bot.
func (u User) IsBot() bool { return u.Type == "Bot" }

// Issue is an issue or pull request as the issues API returns it.
type Issue struct {
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	State     string    `json:"state"` // "open" or "closed"
	Labels    []string  `json:"labels"`
	IsPR      bool      `json:"is_pr,omitempty"`
	Author    User      `json:"author"`
	URL       string    `json:"url"` // html_url
	CreatedAt time.Time `json:"created_at"`
	// Comments is how many comments GitHub reported with the issue (the
	// REST field comments); 0 when not known.
	Comments int `json:"comments,omitempty"`
}

// HasLabel reports whether the issue carries the label (exact match).
func (i Issue) HasLabel(name string) bool {
	for _, l := range i.Labels {
		if l == name {
			return true
		}
	}
	return false
}

// Comment is an issue (or PR conversation) comment.
type Comment struct {
	ID          int64     `json:"id"`
	IssueNumber int       `json:"issue_number"`
	Author      User      `json:"author"`
	Body        string    `json:"body"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	URL         string    `json:"url"` // html_url
	// AppID is performed_via_github_app.id, 0 when the comment was not made
	// through a GitHub App.
	AppID int64 `json:"app_id,omitempty"`
	// Reactions counts the comment's reactions by content ("+1",
	// "confused", ...), from the rollup GitHub lists with it (nil when
	// unknown, empty when there are none).
	Reactions map[string]int `json:"reactions,omitempty"`
}

// LabelAutoColor is the colour GitHub gives a label it creates because an
// issue was given a label the repository lacked.
const LabelAutoColor = "ededed"

// Label is a repository label.
type Label struct {
	Name        string `json:"name"`
	Color       string `json:"color"` // six hex digits, no '#'
	Description string `json:"description"`
}

// Pull is a pull request.
type Pull struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	Body    string `json:"body"`
	State   string `json:"state"` // "open" or "closed"
	Merged  bool   `json:"merged"`
	Author  User   `json:"author"`
	HeadSHA string `json:"head_sha"`
	URL     string `json:"url"`
	// HeadRepo is head.repo.full_name: the repository itself, a fork's
	// name, or "" when the fork was deleted.
	HeadRepo string `json:"head_repo,omitempty"`
	// BaseRef is the branch the PR merges into (base.ref).
	BaseRef string `json:"base_ref,omitempty"`
}

// Review is a pull request review.
type Review struct {
	ID          int64     `json:"id"`
	PR          int       `json:"pr"`
	Reviewer    User      `json:"reviewer"`
	State       string    `json:"state"` // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED
	Body        string    `json:"body"`
	SubmittedAt time.Time `json:"submitted_at"`
	URL         string    `json:"url"`
	CommitSHA   string    `json:"commit_sha"`
}

// Check is one check run (or commit status) on a commit.
type Check struct {
	// ID is the check run's (or commit status's) id.
	ID         int64  `json:"id,omitempty"`
	Name       string `json:"name"`
	Status     string `json:"status"`     // queued, in_progress, completed
	Conclusion string `json:"conclusion"` // success, failure, neutral, cancelled, skipped, timed_out, action_required, ""
	URL        string `json:"url"`
	// AppID is the App that created a check run (0 for commit statuses).
	AppID int64 `json:"app_id,omitempty"`
	// ExternalID is a check run's external_id (set where a caller needs
	// to tell the bot's own check runs from others of the same name).
	ExternalID string `json:"external_id,omitempty"`
}

// WorkflowRun is a GitHub Actions workflow run.
type WorkflowRun struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	DisplayTitle string    `json:"display_title"`
	Status       string    `json:"status"`
	Conclusion   string    `json:"conclusion"`
	Event        string    `json:"event"`
	HeadSHA      string    `json:"head_sha"`
	Path         string    `json:"path"` // .github/workflows/x.yml
	URL          string    `json:"url"`
	CreatedAt    time.Time `json:"created_at"`
	// HeadRepo is head_repository.full_name: the fork a run came from, or
	// the repository itself.
	HeadRepo string `json:"head_repo,omitempty"`
}

// Forge is the repository-scoped API autopilot needs.
type Forge interface {
	// Repo returns "owner/name".
	Repo() string

	GetIssue(ctx context.Context, number int) (Issue, error)
	// ListOpenIssues lists open issues (not PRs) carrying label.
	ListOpenIssues(ctx context.Context, label string) ([]Issue, error)
	// ListComments returns every comment on the issue, oldest first.
	ListComments(ctx context.Context, number int) ([]Comment, error)
	GetComment(ctx context.Context, id int64) (Comment, error)
	CreateComment(ctx context.Context, number int, body string) (Comment, error)
	EditComment(ctx context.Context, id int64, body string) (Comment, error)
	React(ctx context.Context, commentID int64, content string) error
	// DeleteIssueComment deletes one of the bot's own comments (a duplicate
	// a concurrent run posted too); a comment already gone is not an error.
	DeleteIssueComment(ctx context.Context, id int64) error

	// AddLabels adds labels to an issue. GitHub creates a label the
	// repository lacks as it adds it (grey, LabelAutoColor, no
	// description); such a label then gets the colour and description given
	// here. A label that already exists is never changed.
	AddLabels(ctx context.Context, number int, labels []Label) error
	RemoveLabel(ctx context.Context, number int, label string) error

	// Permission returns the user's repository permission. Errors must be
	// returned as errors, never mapped to a permission: callers fail closed.
	Permission(ctx context.Context, login string) (access.Level, error)

	GetPull(ctx context.Context, number int) (Pull, error)
	ListReviews(ctx context.Context, pr int) ([]Review, error)
	ListChecks(ctx context.Context, sha string) ([]Check, error)

	// ReadFile reads a file at the default branch; found is false on 404.
	ReadFile(ctx context.Context, path string) (data []byte, found bool, err error)

	// DispatchWorkflow triggers workflow_dispatch; runID is 0 when the server
	// does not return run details.
	DispatchWorkflow(ctx context.Context, workflow, ref string, inputs map[string]string) (runID int64, err error)
	ListWorkflowRuns(ctx context.Context, workflow string, since time.Time) ([]WorkflowRun, error)
}

// ThreadReader is implemented by forges that can read part of a thread, so
// that reading an issue costs the same at 10 and 10,000 comments (reconcile
// falls back to ListComments without it). Both list oldest first.
type ThreadReader interface {
	// ListCommentsHead returns the first page of the issue's comments (up
	// to 100) and whether more follow.
	ListCommentsHead(ctx context.Context, number int) (head []Comment, more bool, err error)
	// ListCommentsSince returns every comment last updated at or after
	// since (GitHub's since: an edit brings an old comment back).
	ListCommentsSince(ctx context.Context, number int, since time.Time) ([]Comment, error)
}

// RecentReader is implemented by forges that read a thread from its most
// recently updated comment backwards (GitHub's GraphQL API). Every state
// write edits the state comment, so it is among the first comments read,
// and so is every comment new or edited since: a read costs what changed,
// not the thread's length.
type RecentReader interface {
	// ReadRecent reads the issue and its comments a page at a time, most
	// recently updated page first, and asks more(issue, page) after each
	// page whether to read the one before it (page is ordered by updated
	// time, least recent first). The issue comes with the first page.
	ReadRecent(ctx context.Context, number int, more func(is Issue, page []Comment) bool) (Recent, error)
	// Requests counts the requests the forge has sent so far (of any
	// kind): equal counts at two moments mean nothing was asked in between.
	// A negative count means the forge does not count.
	Requests() int64
}

// Recent is what a RecentReader read.
type Recent struct {
	Issue Issue
	// Comments are in no particular order.
	Comments []Comment
	// All: the read reached the thread's first comment (Comments is the
	// whole thread).
	All bool
}

// Errors returned by Forge implementations. Use errors.Is / errors.As.
var (
	ErrNotFound   = errors.New("not found")
	ErrForbidden  = errors.New("forbidden")
	ErrValidation = errors.New("validation failed")
	// ErrUnauthorized: GitHub refused the credentials (401): a revoked or
	// expired token.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNoInstallation: GitHub does not know the App installation the
	// call was to be authenticated as (its token request answered 404:
	// uninstalled, or another App's). It is an ErrUnauthorized too, so
	// every path that stops on refused credentials stops on it; unlike a
	// revoked token, a new one cannot be had, so it is never retried.
	ErrNoInstallation = fmt.Errorf("%w: GitHub does not know the App installation", ErrUnauthorized)
)

// RateLimitError says the API refused the call until Until.
type RateLimitError struct {
	Until     time.Time
	Secondary bool
	Msg       string
	// Held: the installation's shared budget held the request back
	// unsent (internal/budget); Msg says why.
	Held bool
}

func (e *RateLimitError) Error() string {
	kind := "primary"
	if e.Secondary {
		kind = "secondary"
	}
	return fmt.Sprintf("github %s rate limit until %s: %s", kind, e.Until.UTC().Format(time.RFC3339), e.Msg)
}

// TransientError is a failure worth retrying later (5xx, timeouts).
type TransientError struct {
	Status int
	Err    error
}

func (e *TransientError) Error() string {
	return fmt.Sprintf("github transient error (status %d): %v", e.Status, e.Err)
}

func (e *TransientError) Unwrap() error { return e.Err }

// CheckRunOut is a check run to create on a commit (the PR check).
type CheckRunOut struct {
	Name       string
	HeadSHA    string
	Status     string // in_progress or completed
	Conclusion string // set when completed
	ExternalID string
	DetailsURL string
	Title      string
	Summary    string
	Actions    []CheckRunAction
}

// CheckRunAction is a requested action (button) of a check run; GitHub
// allows three, with label and identifier of at most 20 characters and a
// description of at most 40.
type CheckRunAction struct {
	Label       string
	Description string
	Identifier  string
}

// CheckWriter is implemented by forges that can write check runs (GitHub
// with checks: write, the sandbox). A forge without it shows no PR check.
type CheckWriter interface {
	// CreateCheckRun creates a check run and returns its id. The latest
	// check run of a name on a commit is the one GitHub shows and branch
	// protection reads.
	CreateCheckRun(ctx context.Context, c CheckRunOut) (int64, error)
}
