package github

import (
	"context"
	"fmt"
	"net/http"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// Permission returns the user's permission on the repository from
// GET /repos/{o}/{r}/collaborators/{u}/permission. role_name is preferred
// when it is triage or maintain (the legacy permission field reports those
// as read and write); a 404 (not a collaborator) is access.None. Any
// other failure is an error, never a permission: callers fail closed.
func (c *Client) Permission(ctx context.Context, login string) (access.Level, error) {
	what := fmt.Sprintf("permission of %q", login)
	if login == "" {
		return "", fmt.Errorf("github %s: empty login", what)
	}
	var p struct {
		Permission string `json:"permission"`
		RoleName   string `json:"role_name"`
	}
	_, err := c.do(ctx, transport.Op{Kind: "GET permission", ETag: true}, http.MethodGet,
		c.repoPath("collaborators", login, "permission"), nil, &p, "")
	if statusOf(err) == http.StatusNotFound {
		return access.None, nil
	}
	if err != nil {
		return "", c.mapErr(what, err)
	}
	switch access.Level(p.RoleName) {
	case access.Triage, access.Maintain:
		return access.Level(p.RoleName), nil
	}
	perm, err := access.Parse(p.Permission)
	if err != nil {
		return "", fmt.Errorf("github %s: %w", what, err)
	}
	return perm, nil
}

// ReadFile reads a file at the default branch through the contents API
// (raw media type). found is false when GitHub answers 404.
func (c *Client) ReadFile(ctx context.Context, path string) ([]byte, bool, error) {
	return c.readFile(ctx, path, "")
}
