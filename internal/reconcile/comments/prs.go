package comments

import (
	"errors"
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// PRs lists the linked PRs whose conversations may hold unhandled answers:
// the PR a comment event came from (trigger), and every PR the state knows
// when all is set (a sweep, or an issue comment about to be applied) and
// the run is not done, so an answer on a PR whose event was lost is
// applied in creation order, before later issue comments. The issue itself
// is left out.
func PRs(trigger, issue int, st *state.State, all bool) []int {
	var prs []int
	if trigger != 0 {
		prs = append(prs, trigger)
	}
	if all && st.Run != state.RunDone {
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

// ReadPRs reads the conversations of prs (list, one call each), each
// comment stamped with its PR. The bot's own comments (trusted) are left
// out; a PR that is gone is skipped.
func ReadPRs(prs []int, list func(pr int) ([]forge.Comment, error), trusted func(forge.Comment) bool) ([]forge.Comment, error) {
	var out []forge.Comment
	for _, n := range prs {
		cs, err := list(n)
		if errors.Is(err, forge.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list comments of linked PR #%d: %w", n, err)
		}
		for _, c := range cs {
			if trusted(c) {
				continue
			}
			c.IssueNumber = n
			out = append(out, c)
		}
	}
	return out, nil
}
