package comments

import (
	"context"
	"log/slog"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// Perms looks up each login's permission once per pass (logins compare
// case-insensitively). A failed lookup is logged and kept: callers fail
// closed on it.
type Perms struct {
	Forge  forge.Forge
	Logger *slog.Logger
	m      map[string]perm
}

type perm struct {
	p   access.Level
	err error
}

// Get returns login's permission, asking the forge the first time.
func (ps *Perms) Get(ctx context.Context, login string) (access.Level, error) {
	key := strings.ToLower(login)
	if p, ok := ps.m[key]; ok {
		return p.p, p.err
	}
	p, err := ps.Forge.Permission(ctx, login)
	if err != nil {
		ps.Logger.Warn("permission lookup failed; failing closed", "login", login, "err", err)
	}
	if ps.m == nil {
		ps.m = map[string]perm{}
	}
	ps.m[key] = perm{p, err}
	return p, err
}
