package engine

import (
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// LinkedPRsToRead lists the linked PRs whose conversations may hold
// unhandled answers: the PR a comment event came from (trigger), and every
// PR the state knows when all is set (a sweep, or an issue comment about
// to be applied) and the run is not done, so an answer on a PR whose event
// was lost is applied in creation order, before later issue comments. The
// issue itself is left out.
func LinkedPRsToRead(trigger, issue int, st *state.State, all bool) []int {
	var prs []int
	if trigger != 0 {
		prs = append(prs, trigger)
	}
	if all && st != nil && st.Run != state.RunDone {
		for _, n := range st.LinkedPRs {
			if n != trigger {
				prs = append(prs, n)
			}
		}
	}
	out := prs[:0]
	for _, n := range prs {
		if n != issue {
			out = append(out, n)
		}
	}
	return out
}

// ReadComment is what the pending rules read of a comment.
type ReadComment struct {
	ID int64
	// Acts: its reply could act (an answer, command or report).
	Acts bool
	// SeenAtLoad: the pass read it when it loaded the issue.
	SeenAtLoad bool
	// Bot: the configured bot wrote it.
	Bot bool
}

// AnyPending reports an unhandled comment among cs that could act.
func AnyPending(st *state.State, cs []ReadComment) bool {
	for _, c := range cs {
		if c.Acts && !outbox.Handled(st, c.ID) {
			return true
		}
	}
	return false
}

// AnyUnseen reports a comment that could act, not seen at the load, not
// the bot's and not handled in st: a concurrent run may have applied it to
// the state a pass is about to overwrite (or just overwrote).
func AnyUnseen(st *state.State, cs []ReadComment) bool {
	for _, c := range cs {
		if !c.SeenAtLoad && !c.Bot && c.Acts && !outbox.Handled(st, c.ID) {
			return true
		}
	}
	return false
}
