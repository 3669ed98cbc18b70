package state_test

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestArchiveMarkerRoundTrip(t *testing.T) {
	m := state.ArchiveMarker(21, 40)
	if m != "<!-- autopilot:decisions 21-40 -->" {
		t.Fatalf("marker %q", m)
	}
	if from, to, ok := state.ParseArchiveMarker(m); !ok || from != 21 || to != 40 {
		t.Errorf("ParseArchiveMarker(%q) = %d, %d, %v", m, from, to, ok)
	}
	for _, bad := range []string{"<!-- autopilot:decisions 40-21 -->", "<!-- autopilot:decisions 0-3 -->",
		"<!-- autopilot:decisions 1-2", "<!-- autopilot:notice x -->", "<!-- autopilot:decisions a-b -->"} {
		if _, _, ok := state.ParseArchiveMarker(bad); ok {
			t.Errorf("ParseArchiveMarker(%q) accepted", bad)
		}
	}
}
