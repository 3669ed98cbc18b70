package config

import (
	"strings"
	"testing"
)

// A tracker registered (reconcile/trackersync registers every row of its
// Registry) is a valid value of tracker: with no other edit; the error
// for an unknown one lists the registered names.
func TestARegisteredTrackerIsAValidTrackerValue(t *testing.T) {
	if _, err := Parse([]byte("tracker: linear\n")); err == nil || !strings.Contains(err.Error(), `"linear": want jira, github or local`) {
		t.Fatalf("before registration: err = %v", err)
	}
	defer unregisterTracker("linear")
	RegisterTracker("linear")
	RegisterTracker("linear") // twice is once
	if _, err := Parse([]byte("tracker: linear\n")); err != nil {
		t.Fatalf("registered: %v", err)
	}
	_, err := Parse([]byte("tracker: plane\n"))
	if err == nil || !strings.Contains(err.Error(), `"plane": want jira, github, local or linear`) {
		t.Fatalf("unknown: err = %v", err)
	}
}
