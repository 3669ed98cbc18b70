package engine

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestOnlyApprovalsCount: of a PR's reviews only approvals reach the
// trusted-PR rule.
func TestOnlyApprovalsCount(t *testing.T) {
	for s, want := range map[string]bool{"APPROVED": true, "CHANGES_REQUESTED": false, "COMMENTED": false, "DISMISSED": false, "PENDING": false, "approved": false} {
		if got := Approves(s); got != want {
			t.Errorf("Approves(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestCheckPendingTable pins when a PR check's write is tried again: a
// transient failure or a rate limit marks it pending; success or a
// refusal (a workflow without checks: write gets 403) clears it, and the
// engine is told only when the mark changes.
func TestCheckPendingTable(t *testing.T) {
	st := &state.State{PRChecks: []state.PRCheck{{PR: 4, Head: "h1"}, {PR: 5, Head: "h2", Pending: true}}}
	for _, tc := range []struct {
		name    string
		pr      int
		head    string
		class   ErrClass
		pending bool
		tell    bool
	}{
		{"written", 4, "h1", ErrNone, false, false},
		{"5xx marks pending", 4, "h1", ErrTransient, true, true},
		{"rate limit marks pending", 4, "h1", ErrRateLimited, true, true},
		{"refused is given up", 4, "h1", ErrRefused, false, false},
		{"written clears a pending mark", 5, "h2", ErrNone, false, true},
		{"still pending", 5, "h2", ErrTransient, true, false},
	} {
		pending, tell := CheckWritten(st, tc.pr, tc.head, tc.class)
		if pending != tc.pending || tell != tc.tell {
			t.Errorf("%s: CheckWritten = pending %v, tell %v; want %v, %v", tc.name, pending, tell, tc.pending, tc.tell)
		}
	}
}

// TestForkHead: a PR whose head lives in another repository (compared
// without case) is a fork's.
func TestForkHead(t *testing.T) {
	for _, tc := range []struct {
		head, repo string
		want       bool
	}{
		{"acme/widgets", "acme/widgets", false},
		{"Acme/Widgets", "acme/widgets", false},
		{"mallory/widgets", "acme/widgets", true},
		{"", "acme/widgets", true},
	} {
		if got := ForkHead(tc.head, tc.repo); got != tc.want {
			t.Errorf("ForkHead(%q, %q) = %v, want %v", tc.head, tc.repo, got, tc.want)
		}
	}
}
