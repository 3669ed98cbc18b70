package state

// Tracker names where a run's tasks go (State.TrackerInUse), as the config
// names it (tracker: jira|github|local). This is the one definition; the
// config's values are these.
type Tracker string

// Trackers a run's tasks go to (State.TrackerInUse), as the config names
// them (tracker: jira|github|local).
const (
	TrackerJira   Tracker = "jira"
	TrackerGitHub Tracker = "github" // GitHub sub-issues
	TrackerLocal  Tracker = "local"  // no tracker: the tasks stay in the issue
)

// TrackerLabel is the word the state comment, replies and the demo put
// before the sync state of a run's tasks for tracker t ("Jira: pending
// (3)", "GitHub: pending (3)"): "Jira", "GitHub" (sub-issues), or "Tasks"
// when the tasks have no tracker or it is not known yet (a comment written
// before schema 2 that gave no sign of it).
func TrackerLabel(t Tracker) string {
	switch t {
	case TrackerJira:
		return "Jira"
	case TrackerGitHub:
		return "GitHub"
	}
	return "Tasks"
}
