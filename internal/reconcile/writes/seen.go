package writes

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/autopilot-dev/autopilot/internal/reconcile/load"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// RefusedOutbox holds the markers of the outbox comments and archives
// of s GitHub refused (422), by the fingerprint s remembers: given up,
// never sent again (said once in the log when refused).
func RefusedOutbox(s *state.State) map[string]bool {
	out := map[string]bool{}
	for _, e := range s.Outbox {
		body, ok := postedBody(s, e)
		if _, fp := CommentRequest(e.Marker, body); ok && Refused(s, fp) {
			out[e.Marker] = true
		}
	}
	return out
}

// CommentRequest is a comment effect as posted: its body cut to what a
// comment holds (leaving room for the version tag), and the fingerprint a
// refusal of it is remembered by.
func CommentRequest(marker, body string) (sent, fp string) {
	sent = textsafe.Truncate(body, textsafe.MaxBody-load.TagReserve)
	return sent, Fingerprint("comment", marker, sent)
}

// postedBody is the body an outbox comment is posted with. The outbox
// keeps no body for an archive: it is rendered from the decisions s holds
// until the archive is seen, as the engine renders it to post.
func postedBody(s *state.State, e state.Effect) (string, bool) {
	switch e.Kind {
	case state.EffComment:
		return e.Body, true
	case state.EffArchive:
		from, to, ok := state.ParseArchiveMarker(e.Marker)
		if !ok {
			return "", false
		}
		return codec.RenderArchive(s, from, to)
	}
	return "", false
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
