package config

import (
	"slices"
	"strings"
	"sync"
)

// trackers are the valid values of tracker:, in the order errors list
// them: the three built in (their constants above), then every tracker
// registered with RegisterTracker.
var trackers = struct {
	sync.Mutex
	names []string
}{names: []string{TrackerJira, TrackerGitHub, TrackerLocal}}

// RegisterTracker makes name a valid value of tracker:. Every tracker is
// one row of reconcile/trackersync.Registry, which registers each row's
// name here, so a new tracker needs no edit of the configuration.
func RegisterTracker(name string) {
	trackers.Lock()
	defer trackers.Unlock()
	if !slices.Contains(trackers.names, name) {
		trackers.names = append(trackers.names, name)
	}
}

// unregisterTracker undoes RegisterTracker (tests).
func unregisterTracker(name string) {
	trackers.Lock()
	defer trackers.Unlock()
	trackers.names = slices.DeleteFunc(trackers.names, func(n string) bool { return n == name })
}

// knownTracker reports whether name is a valid value of tracker:.
func knownTracker(name string) bool {
	trackers.Lock()
	defer trackers.Unlock()
	return slices.Contains(trackers.names, name)
}

// trackerChoices lists the valid values for an error: "jira, github or
// local".
func trackerChoices() string {
	trackers.Lock()
	defer trackers.Unlock()
	n := trackers.names
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}
