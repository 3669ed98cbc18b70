// Package effects carries out the effects a pass announced in the state:
// comments (skipped when their marker is on the thread, given up when
// GitHub refused them), reactions, and workflow dispatches (handed back to
// the pass, which feeds their outcome to the engine).
package effects

import (
	"context"
	"errors"
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/load"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Performer is what performing a pass's effects needs of it.
type Performer struct {
	Forge  forge.Forge
	Issue  int
	DryRun bool
	Print  func(string)
	// Markers are the bot's comments on the thread by marker; a comment
	// posted is added.
	Markers map[string]forge.Comment
	// Refused and Refuse remember requests GitHub refused with 422.
	Refused func(fp string) bool
	Refuse  func(fp string, err error)
	// Tag is the version tag a posted comment carries.
	Tag func() string
	// Replied reports whether the bot already replied to a comment.
	Replied func(id int64) bool
	// Posted records a comment this pass created and its marker.
	Posted func(id int64, marker string)
	// Dispatch sends a workflow dispatch and applies its outcome.
	Dispatch func(state.Effect) error
	// Deploy answers (or reports on) a deployment protection-rule request
	// and applies its outcome.
	Deploy func(state.Effect) error
}

// Perform executes the effects one Ready handed out, in order, skipping
// comments whose marker exists. Effects a dispatch's outcome adds come in
// a later Ready.
func (p Performer) Perform(ctx context.Context, effects []state.Effect) error {
	for _, e := range effects {
		switch e.Kind {
		case state.EffComment, state.EffArchive:
			if err := p.comment(ctx, e); err != nil {
				return err
			}
		case state.EffEdit:
			if err := p.edit(ctx, e); err != nil {
				return err
			}
		case state.EffReact:
			if !e.Owed && p.Replied(e.Target) {
				// Re-classified (status and help are not kept in the ledger
				// without a write): its reaction came before the reply that
				// is already there, so it is not sent again.
				continue
			}
			if p.DryRun {
				p.Print(fmt.Sprintf("dry-run: would react %s to comment %d", e.Reaction, e.Target))
				continue
			}
			if err := p.Forge.React(ctx, e.Target, e.Reaction); err != nil && !errors.Is(err, forge.ErrNotFound) {
				return fmt.Errorf("react on #%d: %w", p.Issue, err)
			}
		case state.EffDispatch:
			if err := p.Dispatch(e); err != nil {
				return err
			}
		case state.EffDeployAnswer, state.EffDeployReport:
			if err := p.Deploy(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// comment posts an announced comment unless its marker is on the thread
// or GitHub refused it before.
func (p Performer) comment(ctx context.Context, e state.Effect) error {
	if _, done := p.Markers[e.Marker]; done {
		return nil
	}
	body, fp := writes.CommentRequest(e.Marker, e.Body)
	if p.DryRun {
		p.Print("dry-run: would comment on #" + fmt.Sprint(p.Issue) + ":\n" + body)
		return nil
	}
	if p.Refused(fp) {
		return nil
	}
	c, err := p.Forge.CreateComment(ctx, p.Issue, body+p.Tag())
	if errors.Is(err, forge.ErrValidation) {
		p.Refuse(fp, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("comment on #%d: %w", p.Issue, err)
	}
	p.Markers[e.Marker] = c
	p.Posted(c.ID, e.Marker)
	return nil
}

// edit replaces the text of the bot's comment starting with the effect's
// marker, keeping the version tag it was posted with: one write when the
// text differs, none when it is the same or the comment is not on the
// thread (deleted by someone: nothing to show the line in).
func (p Performer) edit(ctx context.Context, e state.Effect) error {
	c, ok := p.Markers[e.Marker]
	if !ok {
		return nil
	}
	body, _ := writes.CommentRequest(e.Marker, e.Body)
	body += load.TagOf(c.Body)
	if body == c.Body {
		return nil
	}
	if p.DryRun {
		p.Print(fmt.Sprintf("dry-run: would edit comment %d on #%d:\n%s", c.ID, p.Issue, body))
		return nil
	}
	edited, err := p.Forge.EditComment(ctx, c.ID, body)
	switch {
	case errors.Is(err, forge.ErrNotFound):
		return nil
	case errors.Is(err, forge.ErrValidation):
		return nil // refused: the comment keeps its text, the state holds the line
	case err != nil:
		return fmt.Errorf("edit comment %d on #%d: %w", c.ID, p.Issue, err)
	}
	p.Markers[e.Marker] = edited
	return nil
}
