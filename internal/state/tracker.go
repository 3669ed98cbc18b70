package state

import "sync"

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

// trackers are the trackers a run's tasks may go to, with their labels
// (TrackerLabel): the three above, and any other a registration adds
// (RegisterTracker). The set is open; the three's values and words are
// fixed.
var trackers = struct {
	sync.RWMutex
	labels map[Tracker]string
}{labels: map[Tracker]string{TrackerJira: "Jira", TrackerGitHub: "GitHub", TrackerLocal: "Tasks"}}

// RegisterTracker makes t a tracker a run's tasks may go to (stored as
// State.TrackerInUse), worded label. Every tracker is one row of
// reconcile/trackersync.Registry, which registers each row here, so a new
// tracker is recorded and worded by its own name. A tracker already known
// keeps its label.
func RegisterTracker(t Tracker, label string) {
	if t == "" {
		return
	}
	trackers.Lock()
	defer trackers.Unlock()
	if _, ok := trackers.labels[t]; !ok {
		trackers.labels[t] = label
	}
}

// unregisterTracker undoes RegisterTracker (tests).
func unregisterTracker(t Tracker) {
	trackers.Lock()
	defer trackers.Unlock()
	delete(trackers.labels, t)
}

// trackerLabel is t's label and whether t is a known tracker.
func trackerLabel(t Tracker) (string, bool) {
	trackers.RLock()
	defer trackers.RUnlock()
	l, ok := trackers.labels[t]
	return l, ok
}

// TrackerLabel is the word the state comment, replies and the demo put
// before the sync state of a run's tasks for tracker t ("Jira: pending
// (3)", "GitHub: pending (3)"): "Jira", "GitHub" (sub-issues), a
// registered tracker's own label, or "Tasks" when the tasks have no
// tracker or it is not known yet (a comment written before schema 2 that
// gave no sign of it).
func TrackerLabel(t Tracker) string {
	if l, ok := trackerLabel(t); ok && l != "" {
		return l
	}
	return "Tasks"
}

// Builtin reports whether t is jira, github or local (or empty): the
// trackers whose words the engine has always said.
func (t Tracker) Builtin() bool {
	switch t {
	case "", TrackerJira, TrackerGitHub, TrackerLocal:
		return true
	}
	return false
}
