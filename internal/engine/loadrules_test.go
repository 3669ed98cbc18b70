package engine

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestTrustedAuthorTable pins whose comments the engine trusts as the
// bot's: the bot login (any case), a Bot account, and for an App the
// App's own id.
func TestTrustedAuthorTable(t *testing.T) {
	app := BotIdentity{Login: "autopilot[bot]", AppID: 42}
	action := BotIdentity{Login: "github-actions[bot]"}
	for _, tc := range []struct {
		name string
		a    Author
		bot  BotIdentity
		want bool
	}{
		{"the App through the App", Author{Login: "autopilot[bot]", Bot: true, AppID: 42}, app, true},
		{"login in another case", Author{Login: "Autopilot[Bot]", Bot: true, AppID: 42}, app, true},
		{"a User account carrying the bot's name", Author{Login: "autopilot[bot]", AppID: 42}, app, false},
		{"another App's id", Author{Login: "autopilot[bot]", Bot: true, AppID: 7}, app, false},
		{"another bot", Author{Login: "dependabot[bot]", Bot: true, AppID: 42}, app, false},
		{"Action mode: any app id", Author{Login: "github-actions[bot]", Bot: true, AppID: 15368}, action, true},
		{"Action mode: a person", Author{Login: "maria"}, action, false},
	} {
		if got := TrustedAuthor(tc.a, tc.bot); got != tc.want {
			t.Errorf("%s: TrustedAuthor = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNoticeAcceptance: a notice posted by a bot the pass does not trust
// (a wrong app id or login) still counts as posted, so a misconfiguration
// cannot become a notice loop; any other marker, and anything a person
// posts, does not.
func TestNoticeAcceptance(t *testing.T) {
	for _, tc := range []struct {
		first string
		bot   bool
		want  bool
	}{
		{"<!-- autopilot:notice state-lost -->", true, true},
		{"<!-- autopilot:notice tamper-3-v2 -->", true, true},
		{"<!-- autopilot:notice state-lost -->", false, false},
		{"<!-- autopilot:gate g1-approve -->", true, false},
		{"<!-- autopilot:reply 5 -->", true, false},
		{"hello", true, false},
	} {
		if got := UntrustedMarkerCounts(tc.first, tc.bot); got != tc.want {
			t.Errorf("UntrustedMarkerCounts(%q, bot %v) = %v, want %v", tc.first, tc.bot, got, tc.want)
		}
	}
}

// TestLabelsShowRun: the step and status labels show a run existed.
func TestLabelsShowRun(t *testing.T) {
	for _, tc := range []struct {
		labels []string
		want   bool
	}{
		{nil, false},
		{[]string{"autopilot", "bug"}, false},
		{[]string{"autopilot/step:design"}, true},
		{[]string{"bug", "autopilot/status:waiting"}, true},
	} {
		if got := LabelsShowRun(tc.labels); got != tc.want {
			t.Errorf("LabelsShowRun(%v) = %v, want %v", tc.labels, got, tc.want)
		}
	}
}

// TestRecoverTable pins what a pass does about the state as read: restore
// an edited comment's signed block, re-apply after a rollback, pause on a
// lost state, or nothing.
func TestRecoverTable(t *testing.T) {
	v := func(n int64) *state.State { return &state.State{Version: n} }
	for _, tc := range []struct {
		name  string
		found LoadFound
		ev    events.Event
		roll  bool
		note  string
	}{
		{"nothing wrong", LoadFound{State: v(3), MaxVersion: 3}, nil, false, ""},
		{"nothing at all", LoadFound{}, nil, false, ""},
		{"edited: restored", LoadFound{State: v(4), Restorable: v(4), StateComment: 9, Tampered: "comment 9: edited"},
			events.Recovered{Restored: true, Comment: 9, Version: 4}, false, "restored state after an edit: comment 9: edited"},
		{"rolled back", LoadFound{State: v(3), MaxVersion: 5}, nil, true, "state v3 is older than the bot's comments (v5): comments re-applied"},
		{"labels without state: deleted", LoadFound{Lost: true}, events.Recovered{Lost: true, Deleted: true}, false, "paused: state lost (deleted)"},
		{"no state verifies", LoadFound{Tampered: "comment 2: bad signature"}, events.Recovered{Lost: true}, false, "paused: state lost (modified so that it no longer verifies)"},
	} {
		got := Recover(tc.found)
		if got.Event != tc.ev || got.Rollback != tc.roll || got.Note != tc.note {
			t.Errorf("%s: Recover = %+v, want event %+v, rollback %v, note %q", tc.name, got, tc.ev, tc.roll, tc.note)
		}
	}
}

// TestRestoreOrKeep: an edited comment's signed state replaces the state
// read unless a verified state is newer.
func TestRestoreOrKeep(t *testing.T) {
	v := func(n int64) *state.State { return &state.State{Version: n} }
	for _, tc := range []struct {
		st, rest *state.State
		want     bool
	}{
		{nil, nil, false},
		{v(3), nil, false},
		{nil, v(3), true},
		{v(3), v(3), true},
		{v(3), v(4), true},
		{v(5), v(4), false},
	} {
		if got := Restores(tc.st, tc.rest); got != tc.want {
			t.Errorf("Restores(%v, %v) = %v, want %v", tc.st, tc.rest, got, tc.want)
		}
	}
}
