package tasksync

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
)

// Caps are what a tracker can do and how the rules treat it. Each tracker
// has one registration (reconcile/trackersync.Registry): its name in the
// configuration, its constructor and these; everyone reads them there.
type Caps struct {
	// Name is the tracker's name in notes and errors ("Jira", "GitHub").
	Name string
	// SearchLag overrides Options.SearchLag: a tracker with consistent
	// reads needs only a short lag for a create still in flight.
	SearchLag time.Duration
	// NoWaits: the flow never sits out this tracker's limits inside a
	// pass; the window is recorded and the next run goes on from it.
	NoWaits bool
	// ReadBack: reading every issue back is cheap, so any event on the
	// issue ticks the tasks whose issues were closed.
	ReadBack bool
	// CloseChildren: closing the issue closes the tasks' issues when the
	// configuration's close_children says so (else jira.transition_on_close).
	CloseChildren bool

	// What the port offers (reconcile/trackersync reads it off the port,
	// no registration names it): DependencyLinks, it records
	// dependencies as links of its own; CanClose, it moves an issue to
	// done (the close policy runs only then).
	DependencyLinks, CanClose bool
	// MaxWait is the run's bound on one wait inside a pass (0: the
	// default; NoWaits overrides it).
	MaxWait time.Duration
}

// Bound applies the tracker's capabilities to a sync's options.
func (c Caps) Bound(o Options) Options {
	if c.Name != "" {
		o.Name = c.Name
	}
	if c.MaxWait != 0 {
		o.MaxWait = c.MaxWait
	}
	if c.DependencyLinks {
		o.DependencyLinks = true
	}
	if c.SearchLag > 0 {
		o.SearchLag = c.SearchLag
	}
	if c.NoWaits {
		o.MaxWait = -1
	}
	return o
}

// CloseAsked reports whether cfg asks for the tasks' issues to be moved to
// done when the issue closes, for this tracker.
func (c Caps) CloseAsked(cfg *config.Config) bool {
	if cfg == nil {
		return false
	}
	if c.CloseChildren {
		return cfg.CloseChildren
	}
	return cfg.Jira.TransitionOnClose
}
