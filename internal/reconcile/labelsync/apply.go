package labelsync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
)

// Issue is what a pass knows of an issue's labels.
type Issue struct {
	Number int
	Labels []string
	// Snapshot: Labels came from the event payload; ReadLabels are the
	// labels the state as read derives (load.Loaded).
	Snapshot   bool
	ReadLabels []string
}

// Refusals remembers requests GitHub refused with 422 (by fingerprint):
// Refused asks, Refuse records one.
type Refusals struct {
	Refused func(fp string) bool
	Refuse  func(fp string, err error)
}

// Apply makes the issue's autopilot labels match want and returns the
// labels it has after, and whether they were read again (no longer a
// snapshot). Labels GitHub refuses to add are recorded and not sent again
// unchanged.
func Apply(ctx context.Context, f forge.Forge, is Issue, want []string, rf Refusals) ([]string, bool, error) {
	have, reread := is.Labels, false
	if is.Snapshot && !SameManaged(have, is.ReadLabels) && !SameManaged(have, want) {
		// The payload's labels disagree with the state as read: the event is
		// late or redelivered. Diff against the issue as it is now, so a
		// redelivery sends no needless label changes.
		now, err := f.GetIssue(ctx, is.Number)
		if err != nil {
			return have, false, fmt.Errorf("read labels of #%d: %w", is.Number, err)
		}
		have, reread = now.Labels, true
	}
	add, del := Diff(have, want)
	for _, l := range del {
		if err := f.RemoveLabel(ctx, is.Number, l); err != nil && !errors.Is(err, forge.ErrNotFound) {
			return have, reread, fmt.Errorf("remove label %s: %w", l, err)
		}
	}
	if len(add) > 0 {
		fp := writes.Fingerprint("labels", "", strings.Join(add, "\n"))
		if rf.Refused(fp) {
			add = nil
		} else if err := f.AddLabels(ctx, is.Number, Defs(add)); errors.Is(err, forge.ErrValidation) {
			rf.Refuse(fp, err)
			add = nil
		} else if err != nil {
			return have, reread, fmt.Errorf("add labels: %w", err)
		}
	}
	return append(Without(have, del), add...), reread, nil
}
