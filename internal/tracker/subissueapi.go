package tracker

import (
	"context"
	"errors"
	"time"
)

// The GitHub surface the sub-issue tracker (internal/tracker/subissues)
// needs, implemented by the go-github adapter and the sandbox forge.

// MaxSubIssues is how many sub-issues one parent may hold on GitHub.
const MaxSubIssues = 100

// GHIssue is a GitHub issue as the sub-issue tracker sees it.
type GHIssue struct {
	ID     int64  // the numeric id sub-issue and dependency requests take
	NodeID string // the GraphQL id (node_id) mutations such as pinIssue take
	Number int
	Title  string
	Body   string
	Closed bool
	URL    string
	// Labels are the issue's label names.
	Labels []string
	// Author is the login of the issue's author; AuthorIsBot is GitHub's
	// user.type == "Bot". Only bot-authored issues are adopted by their
	// marker: a person cannot slip an issue of their own into the outbox.
	Author      string
	AuthorIsBot bool
	// AppID is performed_via_github_app.id: the App whose token wrote the
	// issue, where GitHub says (0 otherwise).
	AppID int64
}

// ErrNoDependencies is returned by SubIssueAPI.AddBlockedBy when the host
// has no issue-dependency API (404): dependencies then go in the body.
var ErrNoDependencies = errors.New("github: issue dependencies are not available")

// SubIssueAPI is the GitHub REST surface the sub-issue tracker needs. Errors
// are this package's types (*AuthError, *RateLimitError for 403/429
// secondary limits, *TransientError, *ValidationError).
type SubIssueAPI interface {
	// CreateIssue is POST /repos/{o}/{r}/issues.
	CreateIssue(ctx context.Context, title, body string, labels []string) (GHIssue, error)
	// SubIssues is GET /repos/{o}/{r}/issues/{n}/sub_issues, every page.
	SubIssues(ctx context.Context, parent int) ([]GHIssue, error)
	// AddSubIssue is POST /repos/{o}/{r}/issues/{n}/sub_issues with
	// sub_issue_id = the child's numeric id.
	AddSubIssue(ctx context.Context, parent int, childID int64) error
	// AddBlockedBy is POST /repos/{o}/{r}/issues/{n}/dependencies/blocked_by
	// with issue_id = the blocking issue's numeric id.
	AddBlockedBy(ctx context.Context, number int, blockerID int64) error
	// BlockedBy is GET /repos/{o}/{r}/issues/{n}/dependencies/blocked_by;
	// ErrNoDependencies when the host has no dependency API (404).
	BlockedBy(ctx context.Context, number int) ([]GHIssue, error)
	// ListLabeled is GET /repos/{o}/{r}/issues?labels=..&state=all&since=..,
	// every page, pull requests left out. Unlike search it is a consistent
	// read: an issue whose create succeeded is listed at once.
	ListLabeled(ctx context.Context, label string, since time.Time) ([]GHIssue, error)
	// ReadIssue is GET /repos/{o}/{r}/issues/{n}.
	ReadIssue(ctx context.Context, number int) (GHIssue, error)
	// CloseIssue is PATCH /repos/{o}/{r}/issues/{n} with state closed.
	CloseIssue(ctx context.Context, number int) error
}

// SubIssueForge is implemented by forges that can hold tasks as sub-issues
// (the GitHub client, the sandbox).
type SubIssueForge interface {
	SubIssueTracker() SubIssueAPI
}
