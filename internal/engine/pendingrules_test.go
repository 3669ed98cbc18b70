package engine

import (
	"slices"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestLinkedPRsToRead pins which linked PRs' conversations a pass reads:
// the trigger's PR, and every linked PR when all is set and the run is not
// done; never the issue itself.
func TestLinkedPRsToRead(t *testing.T) {
	for _, tc := range []struct {
		name           string
		trigger, issue int
		all            bool
		run            state.RunStatus
		nilState       bool
		want           []int
	}{
		{"trigger only", 5, 1, false, "", false, []int{5}},
		{"all, trigger first, issue left out", 5, 1, true, "", false, []int{5, 3}},
		{"all without trigger", 0, 1, true, "", false, []int{3, 5}},
		{"done run reads only the trigger", 5, 1, true, state.RunDone, false, []int{5}},
		{"the trigger is the issue", 1, 1, false, "", false, nil},
		{"nothing", 0, 1, false, "", false, nil},
	} {
		st := &state.State{LinkedPRs: []int{3, 5, 1}, Run: tc.run}
		if got := LinkedPRsToRead(tc.trigger, tc.issue, st, tc.all); !slices.Equal(got, tc.want) {
			t.Errorf("%s: LinkedPRsToRead = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPendingAndUnseenComments pins which read comments still call for a
// pass (AnyPending: unhandled and able to act) and which show a concurrent
// run may have applied input the pass did not see (AnyUnseen: also not
// seen at the load and not the bot's).
func TestPendingAndUnseenComments(t *testing.T) {
	st := &state.State{}
	acting, chat := ReadComment{ID: 10, Acts: true}, ReadComment{ID: 11}
	for _, tc := range []struct {
		name            string
		st              *state.State
		cs              []ReadComment
		pending, unseen bool
	}{
		{"chat only", st, []ReadComment{chat}, false, false},
		{"an unhandled acting comment", st, []ReadComment{chat, acting}, true, true},
		{"in the ledger", &state.State{Ledger: []state.LedgerEntry{{CommentID: 10, Outcome: "x"}}}, []ReadComment{acting}, false, false},
		{"under the ledger floor", &state.State{LedgerFloor: 10}, []ReadComment{acting}, false, false},
		{"seen at the load", st, []ReadComment{{ID: 10, Acts: true, SeenAtLoad: true}}, true, false},
		{"the bot's own", st, []ReadComment{{ID: 10, Acts: true, Bot: true}}, true, false},
	} {
		if got := AnyPending(tc.st, tc.cs); got != tc.pending {
			t.Errorf("%s: AnyPending = %v, want %v", tc.name, got, tc.pending)
		}
		if got := AnyUnseen(tc.st, tc.cs); got != tc.unseen {
			t.Errorf("%s: AnyUnseen = %v, want %v", tc.name, got, tc.unseen)
		}
	}
}
