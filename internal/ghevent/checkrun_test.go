package ghevent

import (
	"slices"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// TestCheckRunClickNamesItsIssue: a click on autopilot's own check run
// (external_id "autopilot#N") is routed to issue N; anything else names no
// issue, and a click without identifier or check run id is an error.
func TestCheckRunClickNamesItsIssue(t *testing.T) {
	base := ghtest.Payload(t, "check_run.requested_action.json")
	tests := []struct {
		ext  string
		want []int
	}{
		{"autopilot#12", []int{12}},
		{"autopilot#0", nil},
		{"autopilot#012", nil},
		{"autopilot#", nil},
		{"other#12", nil},
		{"autopilot#12x", nil},
	}
	for _, tt := range tests {
		for _, dec := range []func(string, []byte) (*Event, error){Decode, DecodeFast} {
			ev, err := dec("check_run", ghtest.Mutate(t, base, map[string]any{"check_run.external_id": tt.ext}))
			if err != nil {
				t.Fatalf("%q: %v", tt.ext, err)
			}
			if !slices.Equal(ev.LinkedIssues, tt.want) || ev.CheckAction == nil || ev.CheckAction.ExternalID != tt.ext {
				t.Errorf("external_id %q: linked %v, action %+v; want linked %v", tt.ext, ev.LinkedIssues, ev.CheckAction, tt.want)
			}
		}
	}
	for _, field := range []string{"requested_action", "check_run"} {
		if _, err := Decode("check_run", ghtest.Mutate(t, base, map[string]any{field: ghtest.Delete})); err == nil {
			t.Errorf("a click without %s decoded without error", field)
		}
	}
	ev, err := Decode("check_run", ghtest.Mutate(t, base, map[string]any{"action": "created"}))
	if err != nil || ev.Handled {
		t.Errorf("check_run.created: handled %v, err %v; want ignored", ev != nil && ev.Handled, err)
	}
}

// TestQueuedPR reads the PR of a merge queue branch; any other shape names
// none.
func TestQueuedPR(t *testing.T) {
	for ref, want := range map[string]int{
		"refs/heads/gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64":      104,
		"refs/heads/gh-readonly-queue/release/2.x/pr-7-929f8209d40f77f4abc622a499c93a83babdbe64": 7,
		"refs/heads/gh-readonly-queue/main/pr-0-929f":                                            0,
		"refs/heads/gh-readonly-queue/main/pr-07-929f":                                           0,
		"refs/heads/gh-readonly-queue/main/pr-12":                                                0,
		"refs/heads/feature/pr-12-abc":                                                           0,
		"":                                                                                       0,
	} {
		if got := queuedPR(ref); got != want {
			t.Errorf("queuedPR(%q) = %d, want %d", ref, got, want)
		}
	}
}
