package engine

import (
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// Written is what a comment shows of who wrote which text when: the data
// the edit rule decides from.
type Written struct {
	ID        int64
	Author    string
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// EditUnproven reports a comment edited after it was posted (GitHub
// stamps updated_at on every edit) whose current text nothing shows its
// author wrote: the REST API does not name the editor, so only an
// issue_comment.edited delivery sent by the author (proof), carrying
// exactly the text read now, proves it.
func EditUnproven(c Written, proof *Written) bool {
	if c.UpdatedAt.IsZero() || c.UpdatedAt.Equal(c.CreatedAt) {
		return false
	}
	p := proof
	return p == nil || p.ID != c.ID || !strings.EqualFold(p.Author, c.Author) || p.Body != c.Body
}

// MaySupplyTaskFiles reports whether a report by an author with
// permission perm that carries no task block may have its tasks read from
// the step's task files: only someone who may answer (answer) can point
// the run at files in the repository.
func MaySupplyTaskFiles(perm, answer access.Level) bool { return perm.AtLeast(answer) }
