// Package trackersync carries reconcile's side of the task trackers
// (PRODUCT §10): which tracker an issue uses (Registry), the auth check's
// answer for the engine, and performing the tracker ops the engine hands
// out (Perform: the port's call, its error mapped by tracker.Classify).
// The engine decides everything else: whether to sync, and the rules of
// the outbox and of the close policy (engine/tasksync, run by
// engine/pass).
package trackersync

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
	"github.com/autopilot-dev/autopilot/internal/tracker/subissues"
)

// Source builds an issue's tracker.
type Source struct {
	// SubIssues is the forge's sub-issue API (nil when it has none).
	SubIssues tracker.SubIssueAPI
	Now       func() time.Time
	// TrackerFor, when set, builds the tracker from the repository's
	// jira: settings; it overrides Tracker.
	TrackerFor func(config.Jira) (tracker.Tracker, error)
	// Tracker is the Jira tracker (nil when Jira is not configured).
	Tracker tracker.Tracker
	// BotLogin and AppID are our own bot: the only author whose task
	// issues the sub-issue tracker adopts (AppID 0: Action mode, the login
	// alone).
	BotLogin string
	AppID    int64
	// MaxWait bounds one wait inside a pass (0: the default); a tracker
	// registered with NoWaits never waits.
	MaxWait time.Duration
}

// Registration is one tracker: how it is built and what it can do. A new
// tracker is its port (tracker.Tracker) plus one row of Registry.
type Registration struct {
	Caps tasksync.Caps
	// New builds issue number's tracker; nil means tasks stay in the issue.
	New func(src Source, cfg *config.Config, st *state.State, number int) (tracker.Tracker, error)
}

// Registry holds every tracker by its name in the configuration
// (tracker:); everyone reads a tracker's capabilities here.
var Registry = map[string]Registration{
	config.TrackerJira: {Caps: tasksync.Caps{Name: "Jira"}, New: newJira},
	config.TrackerGitHub: {
		Caps: tasksync.Caps{Name: "GitHub", SearchLag: 30 * time.Second, NoWaits: true, ReadBack: true, CloseChildren: true},
		New:  newSubIssues,
	},
	config.TrackerLocal: {Caps: tasksync.Caps{Name: "local"}, New: func(Source, *config.Config, *state.State, int) (tracker.Tracker, error) { return nil, nil }},
}

// init makes every registered tracker's name a valid value of tracker:
// in the configuration, and a tracker the state records and words by its
// capabilities' Name (jira, github and local keep theirs): the row above
// is the one registration.
func init() {
	for name, reg := range Registry {
		config.RegisterTracker(name)
		state.RegisterTracker(state.Tracker(name), reg.Caps.Name)
	}
}

func newJira(src Source, cfg *config.Config, _ *state.State, _ int) (tracker.Tracker, error) {
	if src.TrackerFor != nil {
		return src.TrackerFor(cfg.Jira)
	}
	return src.Tracker, nil
}

// newSubIssues builds the GitHub sub-issue tracker: lists are consistent
// reads (a short lag covers a create still in flight), and the flow never
// waits out a GitHub limit.
func newSubIssues(src Source, _ *config.Config, st *state.State, number int) (tracker.Tracker, error) {
	if src.SubIssues == nil {
		return nil, nil
	}
	var tasks []state.Task
	if st != nil {
		tasks = st.Tasks
	}
	return subissues.New(src.SubIssues, number, tasks, src.Now).Trust(src.BotLogin, src.AppID), nil
}

// For picks issue number's tracker (PRODUCT §10 "Trackers") and its
// capabilities: GitHub sub-issues when the config says tracker: github or
// someone chose them at the Jira authentication gate (State.Tracker), none
// for tracker: local, else Jira when it is configured. A nil tracker means
// tasks stay in the issue.
func (src Source) For(cfg *config.Config, st *state.State, number int) (tracker.Tracker, tasksync.Caps, error) {
	kind := cfg.Tracker
	if st != nil && st.Tracker == state.TrackerGitHub {
		kind = config.TrackerGitHub
	}
	reg, ok := Registry[kind]
	if !ok {
		reg = Registry[config.TrackerJira]
	}
	tr, err := reg.New(src, cfg, st, number)
	if tr == nil {
		// No tracker: nothing it can do, only its name is said.
		return nil, tasksync.Caps{Name: reg.Caps.Name}, err
	}
	caps := PortCaps(tr, reg.Caps)
	caps.MaxWait = src.MaxWait
	return tr, caps, err
}

// PortCaps is c with what the port tr offers besides the calls every
// tracker has: dependency links (tracker.DependencyLinker) and moving an
// issue to done (tracker.Closer). They are read off the port, so a new
// tracker declares them by implementing them.
func PortCaps(tr any, c tasksync.Caps) tasksync.Caps {
	_, c.DependencyLinks = tr.(tracker.DependencyLinker)
	_, c.CanClose = tr.(tracker.Closer)
	return c
}

// SubIssueAPI is f's sub-issue API, nil when it has none.
func SubIssueAPI(f forge.Forge) tracker.SubIssueAPI {
	if sf, ok := f.(tracker.SubIssueForge); ok {
		return sf.SubIssueTracker()
	}
	return nil
}

// Auth answers the engine's Jira auth query with tr (nil: not
// configured). Only a refusal (tracker.AuthError) fails it: Jira down or
// slow is not refusing us, so the run carries on and the outbox retries;
// the GitHub side is never blocked.
func Auth(ctx context.Context, tr tracker.Tracker, caps tasksync.Caps, log *slog.Logger, issue int) events.TrackerAuth {
	ev := events.TrackerAuth{OK: false, Detail: "Jira is not configured"}
	if tr == nil {
		return ev
	}
	var ae *tracker.AuthError
	switch err := tr.CheckAuth(ctx); {
	case err == nil:
		ev = events.TrackerAuth{OK: true}
	case errors.As(err, &ae):
		ev.Detail = tracker.Named(err, caps.Name).Error()
	default:
		log.Warn("tracker auth check failed transiently", "issue", issue, "tracker", caps.Name, "err", err)
		ev = events.TrackerAuth{OK: true}
	}
	return ev
}
