package github

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// The reads of approver policies (reconcile.ApproverReader): team
// membership, a pull request's changed files and who pushed its head.

// TeamMembership returns login's membership of team slug in org:
// "active" or "pending" (GitHub's states), "none" when GitHub says the
// team exists and login is not in it, and "unreadable" when the token
// cannot read the team: a secret team it cannot see (404 on the team too)
// or no "Members: read" permission (403). Other failures are errors.
func (c *Client) TeamMembership(ctx context.Context, org, slug, login string) (string, error) {
	what := fmt.Sprintf("membership of %q in @%s/%s", login, org, slug)
	teamPath := strings.Join([]string{"orgs", url.PathEscape(org), "teams", url.PathEscape(slug)}, "/")
	var m struct {
		State string `json:"state"`
	}
	_, err := c.do(ctx, transport.Op{Kind: "GET team membership", ETag: true}, http.MethodGet, teamPath+"/memberships/"+url.PathEscape(login), nil, &m, "")
	switch statusOf(err) {
	case 0:
		if err != nil {
			return "", c.mapErr(what, err)
		}
		if m.State != "active" && m.State != "pending" {
			return "", fmt.Errorf("github %s: unknown state %q", what, m.State)
		}
		return m.State, nil
	case http.StatusForbidden:
		return "unreadable", nil
	case http.StatusNotFound:
		// Not a member, or a team this token cannot see: the team says.
		_, err := c.do(ctx, transport.Op{Kind: "GET team", ETag: true}, http.MethodGet, teamPath, nil, &struct{}{}, "")
		switch statusOf(err) {
		case 0:
			if err != nil {
				return "", c.mapErr(what, err)
			}
			return "none", nil
		case http.StatusNotFound, http.StatusForbidden:
			return "unreadable", nil
		}
		return "", c.mapErr(what, err)
	}
	return "", c.mapErr(what, err)
}

// PullFiles lists the files pull request n changes (GitHub lists at most
// 3000).
func (c *Client) PullFiles(ctx context.Context, n int) ([]string, error) {
	var out []string
	p := c.repoPath("pulls", strconv.Itoa(n), "files")
	err := paginate(func(page int) (*gh.Response, error) {
		var batch []*gh.CommitFile
		resp, err := c.do(ctx, transport.Op{Kind: "GET pull files", ETag: true}, http.MethodGet, p+listQuery(nil, page), nil, &batch, "")
		for _, f := range batch {
			out = append(out, f.GetFilename())
		}
		return resp, err
	})
	if err != nil {
		return nil, c.mapErr(fmt.Sprintf("list files of #%d", n), err)
	}
	return out, nil
}

// HeadPusher returns who pushed commit sha: its committer, or its author
// when GitHub committed it on the web ("web-flow"); "" when the commit
// names no GitHub account.
func (c *Client) HeadPusher(ctx context.Context, sha string) (string, error) {
	var rc gh.RepositoryCommit
	_, err := c.do(ctx, transport.Op{Kind: "GET commit", ETag: true}, http.MethodGet, c.repoPath("commits", sha), nil, &rc, "")
	if err != nil {
		return "", c.mapErr(fmt.Sprintf("read commit %s", sha), err)
	}
	if login := rc.GetCommitter().GetLogin(); login != "" && login != "web-flow" {
		return login, nil
	}
	return rc.GetAuthor().GetLogin(), nil
}

// ReadFileAt reads a file at ref (a branch, tag or commit); found is false
// when it does not exist there.
func (c *Client) ReadFileAt(ctx context.Context, path, ref string) ([]byte, bool, error) {
	return c.readFile(ctx, path, ref)
}

// readFile reads a file at ref ("": the default branch).
func (c *Client) readFile(ctx context.Context, path, ref string) ([]byte, bool, error) {
	what := fmt.Sprintf("read file %q", path)
	segments := strings.Split(strings.Trim(path, "/"), "/")
	for _, s := range segments {
		if s == "" || s == "." || s == ".." {
			return nil, false, fmt.Errorf("github %s: invalid path", what)
		}
	}
	p := c.repoPath(append([]string{"contents"}, segments...)...)
	if ref != "" {
		p += "?" + url.Values{"ref": {ref}}.Encode()
	}
	var buf bytes.Buffer
	_, err := c.do(ctx, transport.Op{Kind: "GET contents", ETag: true}, http.MethodGet, p, nil, &buf, "application/vnd.github.raw+json")
	if statusOf(err) == http.StatusNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, c.mapErr(what, err)
	}
	return buf.Bytes(), true, nil
}
