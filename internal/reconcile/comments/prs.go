package comments

import (
	"errors"
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

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
