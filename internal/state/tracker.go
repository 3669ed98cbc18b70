package state

// Trackers a run's tasks go to (State.TrackerInUse), as the config names
// them (tracker: jira|github|local).
const (
	TrackerJira   = "jira"
	TrackerGitHub = "github" // GitHub sub-issues
	TrackerLocal  = "local"  // no tracker: the tasks stay in the issue
)

// TrackerLabel is the word the state comment, replies and the demo put
// before the sync state of a run's tasks for tracker t ("Jira: pending
// (3)", "GitHub: pending (3)"): "Jira", "GitHub" (sub-issues), or "Tasks"
// when the tasks have no tracker or it is not known yet (a comment written
// before schema 2 that gave no sign of it).
func TrackerLabel(t string) string {
	switch t {
	case TrackerJira:
		return "Jira"
	case TrackerGitHub:
		return "GitHub"
	}
	return "Tasks"
}
