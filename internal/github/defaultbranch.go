package github

import (
	"context"
	"errors"
	"net/http"

	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// DefaultBranch returns the repository's default branch (default_branch of
// GET /repos/{owner}/{repo}), the ref a dispatch runs at when the
// configuration names none. The read is conditional (ETag), so asking again
// in the same process is free. It reads even in dry-run mode.
func (c *Client) DefaultBranch(ctx context.Context) (string, error) {
	var repo struct {
		DefaultBranch string `json:"default_branch"`
	}
	if _, err := c.do(ctx, transport.Op{Kind: "GET repository", ETag: true}, http.MethodGet, c.repoPath(), nil, &repo, ""); err != nil {
		return "", c.mapErr("read repository", err)
	}
	if repo.DefaultBranch == "" {
		return "", errors.New("github read repository: the answer has no default_branch")
	}
	return repo.DefaultBranch, nil
}
