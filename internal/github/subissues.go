package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// The sub-issue tracker's REST calls. go-github v60 predates sub-issues and
// issue dependencies, so they go through the client's raw NewRequest/Do with
// the shapes of GitHub's REST docs ("Sub-issues", "Issue dependencies").
// Creates are never retried on a transient error (their outcome is looked
// up by marker instead) and never wait out a rate limit: the tracker records
// the window and the flow goes on.

var _ tracker.SubIssueAPI = (*Client)(nil)

// SubIssueTracker returns the client itself (tracker.SubIssueForge).
func (c *Client) SubIssueTracker() tracker.SubIssueAPI { return c }

func ghIssue(is *gh.Issue) tracker.GHIssue {
	out := tracker.GHIssue{ID: is.GetID(), NodeID: is.GetNodeID(), Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(),
		Closed: is.GetState() == "closed", URL: is.GetHTMLURL(),
		Author: is.GetUser().GetLogin(), AuthorIsBot: is.GetUser().GetType() == "Bot"}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

// trackerErr maps the client's errors to the tracker's types.
func (c *Client) trackerErr(what string, err error) error {
	if err == nil {
		return nil
	}
	if statusOf(err) == http.StatusGone {
		return &tracker.GoneError{Gone: state.IssueDeleted, Status: http.StatusGone, Message: "github " + what + ": " + c.classify(err).Error()}
	}
	err = c.classify(err)
	var rl *forge.RateLimitError
	var te *forge.TransientError
	switch {
	case errors.As(err, &rl):
		wait := rl.Until.Sub(c.now())
		if wait < time.Second {
			wait = time.Second
		}
		reason := "github " + what
		if rl.Held {
			reason += ": " + rl.Msg // the interactive reserve, or a wait another replica was told
		}
		return &tracker.RateLimitError{RetryAfter: wait, Reason: reason}
	case errors.As(err, &te):
		return &tracker.TransientError{Status: te.Status, Err: fmt.Errorf("github %s: %w", what, te.Err)}
	case errors.Is(err, forge.ErrUnauthorized):
		return &tracker.AuthError{Status: http.StatusUnauthorized, Message: "github " + what + ": " + err.Error()}
	case errors.Is(err, forge.ErrForbidden):
		return &tracker.AuthError{Status: http.StatusForbidden, Message: "github " + what + ": " + err.Error()}
	case errors.Is(err, forge.ErrValidation), errors.Is(err, forge.ErrNotFound):
		return &tracker.ValidationError{Field: what, Message: err.Error()}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return &tracker.TransientError{Err: fmt.Errorf("github %s: %w", what, err)}
}

// CreateIssue creates an issue with labels (POST /repos/{o}/{r}/issues).
func (c *Client) CreateIssue(ctx context.Context, title, body string, labels []string) (tracker.GHIssue, error) {
	ctx = budget.WithClass(ctx, budget.Background) // tracker work leaves the interactive reserve
	if c.dryRun {
		c.dry("POST issue", "title", title)
		return tracker.GHIssue{ID: c.nextDryID(), Number: 0, Title: title, Body: body}, nil
	}
	in := map[string]any{"title": title, "body": body, "labels": labels}
	var is apiIssue
	_, err := c.do(ctx, transport.Op{Kind: "POST issue", NoRetry: true, NoWait: true}, http.MethodPost, c.repoPath("issues"), in, &is, "")
	if err != nil {
		return tracker.GHIssue{}, c.trackerErr("create issue", err)
	}
	return is.toTracker(), nil
}

// SubIssues lists an issue's sub-issues, every page
// (GET /repos/{o}/{r}/issues/{n}/sub_issues).
func (c *Client) SubIssues(ctx context.Context, parent int) ([]tracker.GHIssue, error) {
	ctx = budget.WithClass(ctx, budget.Background) // tracker work leaves the interactive reserve
	var out []tracker.GHIssue
	var moved error
	err := paginate(func(page int) (*gh.Response, error) {
		var list []*apiIssue
		resp, err := c.do(ctx, transport.Op{Kind: "GET sub-issues", ETag: true}, http.MethodGet,
			c.repoPath("issues", strconv.Itoa(parent), "sub_issues")+listQuery(nil, page), nil, &list, "")
		if moved = movedErr(resp, err); moved != nil {
			return nil, nil
		}
		for _, is := range list {
			out = append(out, is.toTracker())
		}
		return resp, err
	})
	if moved != nil {
		return nil, moved
	}
	if err != nil {
		return nil, c.trackerErr(fmt.Sprintf("list sub-issues of #%d", parent), err)
	}
	return out, nil
}

// AddSubIssue links child (by its numeric id) under parent
// (POST /repos/{o}/{r}/issues/{n}/sub_issues, {"sub_issue_id": id}).
func (c *Client) AddSubIssue(ctx context.Context, parent int, childID int64) error {
	ctx = budget.WithClass(ctx, budget.Background) // tracker work leaves the interactive reserve
	if c.dryRun {
		c.dry("POST sub-issue", "parent", parent, "child", childID)
		return nil
	}
	in := map[string]any{"sub_issue_id": childID}
	resp, err := c.do(ctx, transport.Op{Kind: "POST sub-issue", NoRetry: true, NoWait: true}, http.MethodPost,
		c.repoPath("issues", strconv.Itoa(parent), "sub_issues"), in, nil, "")
	if moved := movedErr(resp, err); moved != nil {
		return moved
	}
	return c.trackerErr(fmt.Sprintf("add sub-issue to #%d", parent), err)
}

// AddBlockedBy records that issue n is blocked by the issue with blockerID
// (POST /repos/{o}/{r}/issues/{n}/dependencies/blocked_by, {"issue_id": id}).
// A 404 means the host has no dependency API: tracker.ErrNoDependencies.
func (c *Client) AddBlockedBy(ctx context.Context, n int, blockerID int64) error {
	ctx = budget.WithClass(ctx, budget.Background) // tracker work leaves the interactive reserve
	if c.dryRun {
		c.dry("POST dependency", "issue", n, "blocked_by", blockerID)
		return nil
	}
	in := map[string]any{"issue_id": blockerID}
	resp, err := c.do(ctx, transport.Op{Kind: "POST dependency", NoRetry: true, NoWait: true}, http.MethodPost,
		c.repoPath("issues", strconv.Itoa(n), "dependencies", "blocked_by"), in, nil, "")
	if moved := movedErr(resp, err); moved != nil {
		return moved
	}
	if statusOf(err) == http.StatusNotFound {
		return tracker.ErrNoDependencies
	}
	return c.trackerErr(fmt.Sprintf("add dependency to #%d", n), err)
}

// BlockedBy lists the issues issue n is blocked by (first page); a 404
// means the host has no dependency API: tracker.ErrNoDependencies.
func (c *Client) BlockedBy(ctx context.Context, n int) ([]tracker.GHIssue, error) {
	ctx = budget.WithClass(ctx, budget.Background) // tracker work leaves the interactive reserve
	var list []*apiIssue
	_, err := c.do(ctx, transport.Op{Kind: "GET dependencies", ETag: true}, http.MethodGet,
		c.repoPath("issues", strconv.Itoa(n), "dependencies", "blocked_by")+listQuery(nil, 0), nil, &list, "")
	if statusOf(err) == http.StatusNotFound {
		return nil, tracker.ErrNoDependencies
	}
	if err != nil {
		return nil, c.trackerErr(fmt.Sprintf("list dependencies of #%d", n), err)
	}
	out := make([]tracker.GHIssue, 0, len(list))
	for _, is := range list {
		out = append(out, is.toTracker())
	}
	return out, nil
}

// ListLabeled lists the repository's issues (open and closed) carrying
// label, updated since since (zero: all), pull requests left out.
func (c *Client) ListLabeled(ctx context.Context, label string, since time.Time) ([]tracker.GHIssue, error) {
	ctx = budget.WithClass(ctx, budget.Background) // tracker work leaves the interactive reserve
	var out []tracker.GHIssue
	q := url.Values{"labels": {label}, "state": {"all"}, "sort": {"created"}, "direction": {"asc"}}
	if !since.IsZero() {
		q.Set("since", since.UTC().Format(time.RFC3339))
	}
	err := paginate(func(page int) (*gh.Response, error) {
		var list []*apiIssue
		resp, err := c.do(ctx, transport.Op{Kind: "GET issues", ETag: true}, http.MethodGet, c.repoPath("issues")+listQuery(q, page), nil, &list, "")
		for _, is := range list {
			if !is.IsPullRequest() {
				out = append(out, is.toTracker())
			}
		}
		return resp, err
	})
	if err != nil {
		return nil, c.trackerErr(fmt.Sprintf("list issues labelled %q", label), err)
	}
	return out, nil
}

// ReadIssue reads one issue for the tracker (GET /repos/{o}/{r}/issues/{n}).
// An issue that is no longer there is a *tracker.GoneError: deleted (410),
// not found (404), or transferred to another repository (GitHub answers 301
// and the HTTP client follows it; MovedTo is where it went).
func (c *Client) ReadIssue(ctx context.Context, n int) (tracker.GHIssue, error) {
	ctx = budget.WithClass(ctx, budget.Background) // tracker work leaves the interactive reserve
	var is apiIssue
	resp, err := c.do(ctx, transport.Op{Kind: "GET issue", ETag: true}, http.MethodGet, c.repoPath("issues", strconv.Itoa(n)), nil, &is, "")
	what := fmt.Sprintf("read #%d", n)
	if via := redirectedFrom(resp, err); via != nil {
		moved := &tracker.GoneError{Gone: state.IssueTransferred, Status: via.StatusCode, MovedTo: via.Header.Get("Location")}
		if err == nil && is.GetHTMLURL() != "" {
			moved.MovedTo = is.GetHTMLURL()
		}
		return tracker.GHIssue{}, moved
	}
	if err != nil {
		if statusOf(err) == http.StatusNotFound {
			return tracker.GHIssue{}, &tracker.GoneError{Gone: state.IssueNotFound, Status: http.StatusNotFound, Message: "github " + what}
		}
		return tracker.GHIssue{}, c.trackerErr(what, err)
	}
	return is.toTracker(), nil
}

// movedErr is a *tracker.GoneError when the request was redirected (a
// transferred issue answers 301, and the HTTP client follows it, turning a
// POST or PATCH into a GET that would look like success), nil otherwise.
func movedErr(resp *gh.Response, err error) error {
	via := redirectedFrom(resp, err)
	if via == nil {
		return nil
	}
	return &tracker.GoneError{Gone: state.IssueTransferred, Status: via.StatusCode, MovedTo: via.Header.Get("Location")}
}

// redirectedFrom returns the redirect answer (GitHub's 301 for a
// transferred issue) that led to the final response, nil when there was
// none.
func redirectedFrom(resp *gh.Response, err error) *http.Response {
	var r *http.Response
	var er *gh.ErrorResponse
	switch {
	case errors.As(err, &er):
		r = er.Response
	case resp != nil:
		r = resp.Response
	}
	if r == nil || r.Request == nil || r.Request.Response == nil {
		return nil
	}
	first := r.Request.Response
	for first.Request != nil && first.Request.Response != nil {
		first = first.Request.Response
	}
	if first.StatusCode != http.StatusMovedPermanently {
		return nil
	}
	return first
}

// apiIssue is an issue as the REST API returns it, with
// performed_via_github_app, which go-github v60's Issue lacks.
type apiIssue struct {
	gh.Issue
	App *struct {
		ID int64 `json:"id"`
	} `json:"performed_via_github_app"`
}

func (a *apiIssue) toTracker() tracker.GHIssue {
	out := ghIssue(&a.Issue)
	if a.App != nil {
		out.AppID = a.App.ID
	}
	return out
}

// CloseIssue closes issue n (PATCH /repos/{o}/{r}/issues/{n}).
func (c *Client) CloseIssue(ctx context.Context, n int) error {
	ctx = budget.WithClass(ctx, budget.Background) // tracker work leaves the interactive reserve
	if c.dryRun {
		c.dry("PATCH issue", "issue", n, "state", "closed")
		return nil
	}
	resp, err := c.do(ctx, transport.Op{Kind: "PATCH issue", NoWait: true}, http.MethodPatch, c.repoPath("issues", strconv.Itoa(n)),
		map[string]any{"state": "closed"}, nil, "")
	if moved := movedErr(resp, err); moved != nil {
		return moved
	}
	return c.trackerErr(fmt.Sprintf("close #%d", n), err)
}
