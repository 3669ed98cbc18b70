package prcheck

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Publisher is what creating the planned check runs needs of a pass.
type Publisher struct {
	Checks forge.CheckWriter
	Logger *slog.Logger
	Issue  int
	// Links are where c's check run points.
	Links func(c checkview.CheckRun) Links
	// St is the state as Apply leaves it; Apply records a pending mark.
	St    func() *state.State
	Apply func(events.CheckShown) error
}

// Publish creates the planned check runs. A failure is logged and noted,
// never fatal: the issue's run does not depend on its PR check. Whether a
// failed check stays pending is the engine's (engine.CheckWritten); a
// pending mark set or cleared goes to the engine (Apply), whose node then
// has a change to write.
func (p Publisher) Publish(ctx context.Context, checks []checkview.CheckRun) (notes []string, err error) {
	for _, c := range checks {
		class, err := Create(ctx, p.Checks, c, p.Links(c))
		if err != nil {
			p.Logger.Warn("PR check not shown", "issue", p.Issue, "pr", c.PR, "head", c.HeadSHA, "err", err)
			notes = append(notes, fmt.Sprintf("the %s check on PR #%d could not be written: %v", c.Name, c.PR, err))
		}
		if pending, tell := engine.CheckWritten(p.St(), c.PR, c.HeadSHA, class); tell {
			if err := p.Apply(events.CheckShown{PR: c.PR, Head: c.HeadSHA, Hash: c.Hash(), Pending: pending}); err != nil {
				return notes, err
			}
		}
	}
	return notes, nil
}
