package reconcile

import (
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
	"github.com/autopilot-dev/autopilot/internal/tracker/subissues"
)

// trackerFor picks the issue's tracker (PRODUCT §10 "Trackers"): GitHub
// sub-issues when the config says tracker: github or someone chose them at
// the Jira authentication gate (State.Tracker), none for tracker: local,
// else Jira when it is configured. nil means tasks stay in the issue.
func (r *Reconciler) trackerFor(cfg *config.Config, st *state.State, number int) (tracker.Tracker, error) {
	kind := cfg.Tracker
	if st != nil && st.Tracker == config.TrackerGitHub {
		kind = config.TrackerGitHub
	}
	switch kind {
	case config.TrackerLocal:
		return nil, nil
	case config.TrackerGitHub:
		api := r.subIssueAPI()
		if api == nil {
			return nil, nil
		}
		var tasks []state.Task
		if st != nil {
			tasks = st.Tasks
		}
		return subissues.New(api, number, tasks, r.o.Now), nil
	}
	if r.o.TrackerFor != nil {
		return r.o.TrackerFor(cfg.Jira)
	}
	return r.o.Tracker, nil
}

// isSubIssues reports whether tr is the GitHub sub-issue tracker, whose
// reads are consistent and whose waits the flow never sits out.
func isSubIssues(tr tracker.Tracker) bool {
	_, ok := tr.(*subissues.Tracker)
	return ok
}

// subIssueAPI is the forge's sub-issue API, nil when it has none.
func (r *Reconciler) subIssueAPI() tracker.SubIssueAPI {
	if f, ok := r.o.Forge.(tracker.SubIssueForge); ok {
		return f.SubIssueTracker()
	}
	return nil
}
