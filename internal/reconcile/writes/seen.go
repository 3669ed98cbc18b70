package writes

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/load"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// Seen is what the thread shows of the writes s announced: the bot's
// comment markers (and their links), the outbox comments GitHub refused
// (refused, by fingerprint), and owed, the reactions the stored ledger
// names that the comments lack.
func Seen(markers map[string]forge.Comment, s *state.State, owed []state.Effect, refused func(fp string) bool) outbox.Seen {
	sn := outbox.Seen{Markers: map[string]bool{}, Refused: map[string]bool{}, Owed: owed, Links: map[string]string{}}
	for m, c := range markers {
		sn.Markers[m] = true
		sn.Links[m] = c.URL
	}
	for _, e := range s.Outbox {
		if e.Kind == state.EffComment && refused(Fingerprint("comment", e.Marker, textsafe.Truncate(e.Body, textsafe.MaxBody-load.TagReserve))) {
			sn.Refused[e.Marker] = true // GitHub refused it (422): given up, said once in the log
		}
	}
	return sn
}

// CommentDeleter deletes an issue comment.
type CommentDeleter interface {
	DeleteIssueComment(ctx context.Context, id int64) error
}

// DeleteDuplicates deletes, each logged, the comments a pass posted that a
// concurrent run posted first (Duplicates); it returns a note for each and
// whether the state comment was one of them.
func DeleteDuplicates(ctx context.Context, f CommentDeleter, log *slog.Logger, issue int, posted map[int64]string, first map[string]int64) (notes []string, stateDup bool, err error) {
	for _, d := range Duplicates(posted, first) {
		id, m := d.ID, d.Marker
		log.Warn("a concurrent run posted the same comment first; deleting ours", "issue", issue, "marker", m, "comment", id, "kept", d.Kept)
		if err := f.DeleteIssueComment(ctx, id); err != nil {
			return notes, stateDup, fmt.Errorf("delete duplicate comment %d on #%d: %w", id, issue, err)
		}
		notes = append(notes, fmt.Sprintf("deleted duplicate comment %d (%s)", id, m))
		if m == state.Marker {
			stateDup = true
		}
	}
	return notes, stateDup, nil
}
