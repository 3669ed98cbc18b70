package trackersync

import (
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// TestANewTrackerIsItsPortPlusOneRegistration: a row added to Registry is
// picked by its configuration name, and its capabilities reach the rules
// (name, search lag, waits) with no other edit.
func TestANewTrackerIsItsPortPlusOneRegistration(t *testing.T) {
	sb := tracker.NewSandbox(tracker.SandboxOptions{})
	Registry["linear"] = Registration{
		Caps: tasksync.Caps{Name: "Linear", NoWaits: true, ReadBack: true},
		New:  func(Source, *config.Config, *state.State, int) (tracker.Tracker, error) { return sb, nil },
	}
	defer delete(Registry, "linear")
	tr, caps, err := Source{}.For(&config.Config{Tracker: "linear"}, nil, 7)
	if err != nil || tr != tracker.Tracker(sb) || caps.Name != "Linear" {
		t.Fatalf("For = %v, %+v, %v", tr, caps, err)
	}
	o := Options{Caps: caps, MaxWait: 30}.rules(tr)
	if o.Name != "Linear" || o.MaxWait != -1 {
		t.Errorf("rules options %+v", o)
	}
}

// TestTrackersPickedByConfigurationAndTheGateChoice pins which tracker an
// issue gets and what it can do.
func TestTrackersPickedByConfigurationAndTheGateChoice(t *testing.T) {
	jira := tracker.NewSandbox(tracker.SandboxOptions{})
	src := Source{Tracker: jira, MaxWait: 5 * time.Second, SubIssues: SubIssueAPI(forge.NewSandbox("octo/repo", forge.User{Login: "autopilot[bot]", Type: "Bot"}, time.Now))}
	for _, tc := range []struct {
		name     string
		cfg      string
		chosen   state.Tracker
		wantName string
		readBack bool
		none     bool
		// what the port offers: dependency links, moving to done
		links, closes bool
	}{
		{"default: Jira", "", "", "Jira", false, false, false, true},
		{"tracker: jira", config.TrackerJira, "", "Jira", false, false, false, true},
		{"tracker: github", config.TrackerGitHub, "", "GitHub", true, false, true, true},
		{"sub-issues chosen at the gate", config.TrackerJira, state.TrackerGitHub, "GitHub", true, false, true, true},
		{"tracker: local", config.TrackerLocal, "", "local", false, true, false, false},
	} {
		tr, caps, err := src.For(&config.Config{Tracker: tc.cfg}, &state.State{Tracker: tc.chosen}, 7)
		if err != nil || (tr == nil) != tc.none || caps.Name != tc.wantName || caps.ReadBack != tc.readBack ||
			caps.DependencyLinks != tc.links || caps.CanClose != tc.closes || (!tc.none && caps.MaxWait != src.MaxWait) {
			t.Errorf("%s: tracker %T, caps %+v, err %v", tc.name, tr, caps, err)
		}
	}
}

// Every row of Registry is a valid value of tracker: (the init registers
// its name with the configuration).
func TestEveryRegisteredTrackerIsAValidConfigValue(t *testing.T) {
	for name := range Registry {
		if _, err := config.Parse([]byte("tracker: " + name + "\n")); err != nil {
			t.Errorf("tracker: %s: %v", name, err)
		}
	}
}
