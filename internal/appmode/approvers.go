package appmode

import (
	"context"

	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
)

// The App's view passes the reads of approver policies through to the
// adapter; a forge without them answers as one that cannot read: no team
// member, no changed file, no pusher (fail closed).

var (
	_ reconcile.ApproverReader = (*view)(nil)
	_ reconcile.ApproverReader = (*gh.Client)(nil)
)

// TeamMembership implements reconcile.ApproverReader.
func (v *view) TeamMembership(ctx context.Context, org, slug, login string) (string, error) {
	if r, ok := v.Forge.(reconcile.ApproverReader); ok {
		return r.TeamMembership(ctx, org, slug, login)
	}
	return "unreadable", nil
}

// PullFiles implements reconcile.ApproverReader.
func (v *view) PullFiles(ctx context.Context, n int) ([]string, error) {
	if r, ok := v.Forge.(reconcile.ApproverReader); ok {
		return r.PullFiles(ctx, n)
	}
	return nil, nil
}

// HeadPusher implements reconcile.ApproverReader.
func (v *view) HeadPusher(ctx context.Context, sha string) (string, error) {
	if r, ok := v.Forge.(reconcile.ApproverReader); ok {
		return r.HeadPusher(ctx, sha)
	}
	return "", nil
}

// ReadFileAt implements reconcile.ApproverReader.
func (v *view) ReadFileAt(ctx context.Context, path, ref string) ([]byte, bool, error) {
	if r, ok := v.Forge.(reconcile.ApproverReader); ok {
		return r.ReadFileAt(ctx, path, ref)
	}
	return nil, false, nil
}
