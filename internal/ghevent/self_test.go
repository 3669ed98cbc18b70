package ghevent

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// The App's own bot causes no work (no loops), except the events it
// causes on purpose: the workflow runs it dispatched (and their deploys
// waiting on a protection rule), and sweeps.
func TestEventsSentByTheBotItselfAreIgnoredExceptDispatchedRunsAndSweeps(t *testing.T) {
	const bot = "autopilot[bot]"
	cases := []struct {
		name, sender string
		want         bool
	}{
		{"issue_comment", "Autopilot[bot]", true},
		{"issues", bot, true},
		{"pull_request", bot, true},
		{"check_run", bot, true},
		{"issue_comment", "octocat", false},
		{"workflow_run", bot, false},
		{"deployment_protection_rule", bot, false}, // the deploy run autopilot dispatched
		{"schedule", bot, false},
		{"workflow_dispatch", bot, false},
		{"issue_comment", bot, false}, // with no bot login, nobody is ignored
	}
	for i, c := range cases {
		login := bot
		if i == len(cases)-1 {
			login = ""
		}
		ev := &Event{Name: c.name, Sender: forge.User{Login: c.sender}}
		if got := FromSelf(ev, login); got != c.want {
			t.Errorf("FromSelf(%s by %s, bot %q) = %v, want %v", c.name, c.sender, login, got, c.want)
		}
	}
}

// The installation events are only noted by the App: it acts on none.
func TestOnlyTheInstallationEventsAreNoted(t *testing.T) {
	for _, k := range Kinds() {
		want := k.Name == "installation" || k.Name == "installation_repositories"
		if got := Noted(k.Name); got != want {
			t.Errorf("Noted(%s) = %v, want %v", k.Name, got, want)
		}
	}
	if Noted("deployment") {
		t.Error("an event outside the table is noted")
	}
}
