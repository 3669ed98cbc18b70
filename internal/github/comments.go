package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	gh "github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// MaxCommentRunes is GitHub's limit on a comment body, in characters.
const MaxCommentRunes = 65536

// markerPrefix starts the hidden first line that makes a bot comment
// findable after a lost response, e.g. "<!-- autopilot:decision 42 -->".
const markerPrefix = "<!-- autopilot"

// apiComment is an issue comment as the REST API returns it. go-github v60's
// IssueComment has no performed_via_github_app, which App mode needs to
// trust the state comment, so comments are decoded here.
type apiComment struct {
	ID        int64     `json:"id"`
	Body      string    `json:"body"`
	HTMLURL   string    `json:"html_url"`
	IssueURL  string    `json:"issue_url"`
	User      *gh.User  `json:"user"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	App       *struct {
		ID int64 `json:"id"`
	} `json:"performed_via_github_app"`
	// Reactions is the rollup: counts by content plus url and total_count.
	Reactions map[string]any `json:"reactions"`
}

func (a apiComment) toComment(issue int) forge.Comment {
	if issue == 0 {
		issue, _ = strconv.Atoi(path.Base(a.IssueURL))
	}
	out := forge.Comment{
		ID: a.ID, IssueNumber: issue, Author: toUser(a.User), Body: a.Body,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, URL: a.HTMLURL,
	}
	if a.App != nil {
		out.AppID = a.App.ID
	}
	if a.Reactions != nil {
		out.Reactions = map[string]int{}
		for k, v := range a.Reactions {
			if n, ok := v.(float64); ok && n > 0 && k != "total_count" {
				out.Reactions[k] = int(n)
			}
		}
	}
	return out
}

// ListComments returns every comment on the issue, oldest first; each page
// is read conditionally on its ETag.
func (c *Client) ListComments(ctx context.Context, number int) ([]forge.Comment, error) {
	var out []forge.Comment
	p := c.repoPath("issues", strconv.Itoa(number), "comments")
	err := paginate(func(page int) (*gh.Response, error) {
		var batch []apiComment
		resp, err := c.do(ctx, transport.Op{Kind: "GET comments", ETag: true}, http.MethodGet, p+listQuery(nil, page), nil, &batch, "")
		for _, a := range batch {
			out = append(out, a.toComment(number))
		}
		return resp, err
	})
	if err != nil {
		return nil, c.mapErr(fmt.Sprintf("list comments of #%d", number), err)
	}
	return out, nil
}

// ListCommentsHead reads the first page of the issue's comments (100,
// conditionally on its ETag) and reports whether more pages follow.
func (c *Client) ListCommentsHead(ctx context.Context, number int) ([]forge.Comment, bool, error) {
	var batch []apiComment
	p := c.repoPath("issues", strconv.Itoa(number), "comments")
	resp, err := c.do(ctx, transport.Op{Kind: "GET comments", ETag: true}, http.MethodGet, p+listQuery(nil, 0), nil, &batch, "")
	if err != nil {
		return nil, false, c.mapErr(fmt.Sprintf("list comments of #%d", number), err)
	}
	out := make([]forge.Comment, 0, len(batch))
	for _, a := range batch {
		out = append(out, a.toComment(number))
	}
	return out, resp != nil && resp.NextPage > 0, nil
}

// ListCommentsSince reads the comments updated at or after since (the
// API's since parameter, whole seconds, every page), each page
// conditionally on its ETag.
func (c *Client) ListCommentsSince(ctx context.Context, number int, since time.Time) ([]forge.Comment, error) {
	var out []forge.Comment
	p := c.repoPath("issues", strconv.Itoa(number), "comments")
	q := url.Values{"since": {since.UTC().Truncate(time.Second).Format(time.RFC3339)}}
	err := paginate(func(page int) (*gh.Response, error) {
		var batch []apiComment
		resp, err := c.do(ctx, transport.Op{Kind: "GET comments", ETag: true}, http.MethodGet, p+listQuery(q, page), nil, &batch, "")
		for _, a := range batch {
			out = append(out, a.toComment(number))
		}
		return resp, err
	})
	if err != nil {
		return nil, c.mapErr(fmt.Sprintf("list comments of #%d since %s", number, q.Get("since")), err)
	}
	return out, nil
}

// GetComment reads one issue comment, conditionally on its ETag.
func (c *Client) GetComment(ctx context.Context, id int64) (forge.Comment, error) {
	var a apiComment
	_, err := c.do(ctx, transport.Op{Kind: "GET comment", ETag: true}, http.MethodGet,
		c.repoPath("issues", "comments", strconv.FormatInt(id, 10)), nil, &a, "")
	if err != nil {
		return forge.Comment{}, c.mapErr(fmt.Sprintf("get comment %d", id), err)
	}
	return a.toComment(0), nil
}

// CreateComment posts a comment. A POST that fails transiently may still
// have committed; when the body starts with a hidden marker line, the
// issue's comments are searched for it (by our own identity) before the
// POST is sent again, so a lost response never yields a duplicate. Without a
// marker the failure is returned, not retried.
func (c *Client) CreateComment(ctx context.Context, number int, body string) (forge.Comment, error) {
	what := fmt.Sprintf("create comment on #%d", number)
	if err := checkBody(body); err != nil {
		return forge.Comment{}, fmt.Errorf("github %s: %w", what, err)
	}
	if c.dryRun {
		c.dry("POST comment", "issue", number, "chars", utf8.RuneCountInString(body))
		now := c.now()
		return forge.Comment{ID: c.nextDryID(), IssueNumber: number, Author: c.self(), Body: body, CreatedAt: now, UpdatedAt: now}, nil
	}
	marker := hiddenMarker(body)
	for attempt := 0; ; attempt++ {
		var a apiComment
		_, err := c.do(ctx, transport.Op{Kind: "POST comment", NoRetry: true}, http.MethodPost,
			c.repoPath("issues", strconv.Itoa(number), "comments"), map[string]string{"body": body}, &a, "")
		if err == nil {
			out := a.toComment(number)
			c.learn(out.Author.Login)
			return out, nil
		}
		mapped := c.classify(err)
		var te *forge.TransientError
		if !errors.As(mapped, &te) || marker == "" || attempt >= c.maxRetries {
			return forge.Comment{}, fmt.Errorf("github %s: %w", what, mapped)
		}
		found, ok, ferr := c.findOwn(ctx, number, marker)
		if ferr != nil {
			return forge.Comment{}, fmt.Errorf("github %s: %w (looking for it by marker also failed: %v)", what, mapped, ferr)
		}
		if ok {
			c.log.Info("github comment POST failed but had committed; adopting it", "issue", number, "comment", found.ID, "err", mapped)
			return found, nil
		}
		if err := c.t.Backoff(ctx, "POST comment", attempt+1, te.Status, te); err != nil {
			return forge.Comment{}, err
		}
	}
}

// EditComment replaces a comment's body (safe to retry: same result).
func (c *Client) EditComment(ctx context.Context, id int64, body string) (forge.Comment, error) {
	what := fmt.Sprintf("edit comment %d", id)
	if err := checkBody(body); err != nil {
		return forge.Comment{}, fmt.Errorf("github %s: %w", what, err)
	}
	if c.dryRun {
		c.dry("PATCH comment", "comment", id, "chars", utf8.RuneCountInString(body))
		return forge.Comment{ID: id, Author: c.self(), Body: body, UpdatedAt: c.now()}, nil
	}
	var a apiComment
	_, err := c.do(ctx, transport.Op{Kind: "PATCH comment"}, http.MethodPatch,
		c.repoPath("issues", "comments", strconv.FormatInt(id, 10)), map[string]string{"body": body}, &a, "")
	if err != nil {
		return forge.Comment{}, c.mapErr(what, err)
	}
	out := a.toComment(0)
	c.learn(out.Author.Login)
	return out, nil
}

// DeleteIssueComment deletes an issue comment; one already gone (404) is
// success.
func (c *Client) DeleteIssueComment(ctx context.Context, id int64) error {
	if c.dryRun {
		c.dry("DELETE comment", "comment", id)
		return nil
	}
	_, err := c.do(ctx, transport.Op{Kind: "DELETE comment"}, http.MethodDelete,
		c.repoPath("issues", "comments", strconv.FormatInt(id, 10)), nil, nil, "")
	if statusOf(err) == http.StatusNotFound {
		return nil
	}
	return c.mapErr(fmt.Sprintf("delete comment %d", id), err)
}

// reactions GitHub accepts on issue comments.
var reactions = map[string]bool{"+1": true, "-1": true, "laugh": true, "confused": true, "heart": true, "hooray": true, "rocket": true, "eyes": true}

// React adds a reaction to an issue comment; an existing one (200) and a new
// one (201) are both success.
func (c *Client) React(ctx context.Context, commentID int64, content string) error {
	what := fmt.Sprintf("react %q to comment %d", content, commentID)
	if !reactions[content] {
		return fmt.Errorf("github %s: %w: unknown reaction (want +1, -1, laugh, confused, heart, hooray, rocket or eyes)", what, forge.ErrValidation)
	}
	if c.dryRun {
		c.dry("POST reaction", "comment", commentID, "content", content)
		return nil
	}
	_, _, err := c.gh.Reactions.CreateIssueCommentReaction(transport.WithOp(ctx, transport.Op{Kind: "POST reaction"}), c.owner, c.name, commentID, content)
	return c.mapErr(what, err)
}

// checkBody refuses a body GitHub would reject, without spending a 422.
func checkBody(body string) error {
	if strings.TrimSpace(body) == "" {
		return fmt.Errorf("%w: empty comment body", forge.ErrValidation)
	}
	if n := utf8.RuneCountInString(body); n > MaxCommentRunes {
		return fmt.Errorf("%w: comment body has %d characters, GitHub allows %d", forge.ErrValidation, n, MaxCommentRunes)
	}
	return nil
}

// hiddenMarker returns the body's first line when it is a hidden autopilot
// marker ("<!-- autopilot..."), else "".
func hiddenMarker(body string) string {
	line, _, _ := strings.Cut(body, "\n")
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, markerPrefix) && strings.HasSuffix(line, "-->") {
		return line
	}
	return ""
}

// findOwn looks for our own comment on the issue whose first line is marker.
// The newest match wins.
func (c *Client) findOwn(ctx context.Context, number int, marker string) (forge.Comment, bool, error) {
	comments, err := c.ListComments(ctx, number)
	if err != nil {
		return forge.Comment{}, false, err
	}
	for i := len(comments) - 1; i >= 0; i-- {
		cm := comments[i]
		if hiddenMarker(cm.Body) == marker && c.isOwn(cm) {
			return cm, true, nil
		}
	}
	return forge.Comment{}, false, nil
}

// isOwn reports whether a comment was written by this client's identity.
func (c *Client) isOwn(cm forge.Comment) bool {
	if c.appID != 0 && cm.AppID != c.appID {
		return false
	}
	if c.botLogin != "" {
		return strings.EqualFold(cm.Author.Login, c.botLogin)
	}
	c.mu.Lock()
	learnt := c.identity
	c.mu.Unlock()
	if learnt != "" {
		return strings.EqualFold(cm.Author.Login, learnt)
	}
	return cm.Author.IsBot()
}

func (c *Client) learn(login string) {
	if login == "" {
		return
	}
	c.mu.Lock()
	c.identity = login
	c.mu.Unlock()
}

// self is the identity dry-run results are attributed to.
func (c *Client) self() forge.User {
	c.mu.Lock()
	defer c.mu.Unlock()
	login := c.botLogin
	if login == "" {
		login = c.identity
	}
	return forge.User{Login: login, Type: "Bot"}
}
