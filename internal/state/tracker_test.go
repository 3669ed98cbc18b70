package state

import (
	"strings"
	"testing"
)

func TestARegisteredTrackerIsRecordedAndWordedByItsRegistration(t *testing.T) {
	RegisterTracker("linear", "Linear")
	RegisterTracker("jira", "JIRA") // a known tracker keeps its wording
	t.Cleanup(func() { unregisterTracker("linear") })
	for _, tc := range []struct {
		tracker Tracker
		valid   bool
		label   string
		stored  bool // valid as State.TrackerInUse
	}{
		{"", false, "Tasks", true},
		{TrackerJira, true, "Jira", true},
		{TrackerGitHub, true, "GitHub", true},
		{TrackerLocal, true, "Tasks", true},
		{"linear", true, "Linear", true},
		{"asana", false, "Tasks", false},
		{"Jira", false, "Tasks", false},
	} {
		if got := tc.tracker.Valid(); got != tc.valid {
			t.Errorf("%q.Valid() = %v, want %v", tc.tracker, got, tc.valid)
		}
		if got := TrackerLabel(tc.tracker); got != tc.label {
			t.Errorf("TrackerLabel(%q) = %q, want %q", tc.tracker, got, tc.label)
		}
		err := validTasks(&State{TrackerInUse: tc.tracker})
		if (err == nil) != tc.stored {
			t.Errorf("TrackerInUse %q: validation says %v, want stored %v", tc.tracker, err, tc.stored)
		}
		if err != nil && !strings.Contains(err.Error(), "tracker_in_use") {
			t.Errorf("TrackerInUse %q: %v does not name the field", tc.tracker, err)
		}
	}
	if tr, ok := ParseTracker("linear"); !ok || tr != "linear" {
		t.Errorf("ParseTracker(linear) = %q, %v", tr, ok)
	}
	unregisterTracker("linear")
	if Tracker("linear").Valid() || TrackerLabel("linear") != "Tasks" {
		t.Error("an unregistered tracker is still known")
	}
}
