package outbox

import (
	"fmt"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/testkit"
)

func TestOwedReactions(t *testing.T) {
	stored := &state.State{Ledger: []state.LedgerEntry{{CommentID: 1, Outcome: state.LedgerApplied}, {CommentID: 2, Outcome: "rejected:unauthorized"},
		{CommentID: 3, Outcome: state.LedgerNotCommand}, {CommentID: 4, Outcome: state.LedgerApplied}, {CommentID: 5, Outcome: state.LedgerApplied}}}
	read := []Rollup{
		{ID: 1, Reactions: map[string]int{}},           // 👍 owed
		{ID: 2, Reactions: map[string]int{"+1": 1}},    // 😕 owed
		{ID: 3, Reactions: map[string]int{}},           // nothing owed
		{ID: 4, Reactions: map[string]int{ReactUp: 2}}, // shown
		{ID: 5},                              // rollup unknown: left alone
		{ID: 6, Reactions: map[string]int{}}, // not in the ledger
	}
	var got []string
	for _, e := range OwedReactions(stored, read) {
		got = append(got, fmt.Sprintf("%d %s %v", e.Target, e.Reaction, e.Owed))
	}
	testkit.WantDeep(t, "owed", got, []string{"1 +1 true", "2 confused true"})
	testkit.Want(t, "no stored state", len(OwedReactions(nil, read)), 0)
}

// The ledger's outcomes are state's (state.LedgerOutcome): an applied
// comment is owed a +1, a rejected one a confused reaction, a comment that
// is no command nothing.
func TestOwedReactionsReadStateLedgerOutcomes(t *testing.T) {
	s := &state.State{Ledger: []state.LedgerEntry{{CommentID: 1, Outcome: state.LedgerApplied}, {CommentID: 2, Outcome: state.RejectedStale},
		{CommentID: 3, Outcome: state.LedgerNotCommand}}}
	read := []Rollup{{ID: 1, Reactions: map[string]int{}}, {ID: 2, Reactions: map[string]int{}}, {ID: 3, Reactions: map[string]int{}}}
	got := map[int64]string{}
	for _, e := range OwedReactions(s, read) {
		got[e.Target] = e.Reaction
	}
	if len(got) != 2 || got[1] != ReactUp || got[2] != ReactConfuse {
		t.Errorf("owed reactions %v, want 1:%s 2:%s", got, ReactUp, ReactConfuse)
	}
}
