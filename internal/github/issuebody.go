package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// EditIssueBody replaces the body of issue n (PATCH /repos/{o}/{r}/issues/{n}):
// the Action's dashboard issue, rewritten when its rows changed.
func (c *Client) EditIssueBody(ctx context.Context, n int, body string) error {
	if c.dryRun {
		c.dry("PATCH issue", "issue", n, "body", fmt.Sprintf("%d characters", len(body)))
		return nil
	}
	resp, err := c.do(ctx, transport.Op{Kind: "PATCH issue"}, http.MethodPatch, c.repoPath("issues", strconv.Itoa(n)),
		map[string]any{"body": body}, nil, "")
	if moved := movedErr(resp, err); moved != nil {
		return moved
	}
	return c.trackerErr(fmt.Sprintf("edit the body of #%d", n), err)
}
