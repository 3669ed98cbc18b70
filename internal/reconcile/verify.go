package reconcile

import (
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/comments"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
)

// verify reads the comments back after a pass that posted comments. GitHub
// has no compare-and-swap for comments, so two runs outside one concurrency
// group (a sweep or a PR event beside an issue event, a redelivery) can both
// pass the version re-read and post the same comment. Read back:
//   - a comment this pass posted that a concurrent run posted first (same
//     marker, lower id) is deleted: the earlier one stands, so there is at
//     most one comment per marker (the later poster always sees both);
//   - if this pass's state comment was one of those, or its body is no
//     longer what this pass wrote (overwritten), or an answer appeared that
//     this pass never saw (a concurrent run may have applied it to a state
//     this pass then overwrote), errRecheck asks for one more pass, which
//     applies whatever is unhandled on top of the state as it now is.
//
// A pass that only edited the state is read back when its write came
// slowly after its version re-read (slowWrite): a concurrent run can hide
// an answer only by loading after the answer appeared (after the re-read,
// which looks for unseen answers) and writing before this pass's PATCH, so
// the window is the re-read-to-PATCH gap. A quick write leaves no room for
// another run's load, re-read and write, and saves the call on every
// answer. A failed read-back is only logged: what it would find stays
// unhandled in the ledger for the next event or the sweep.
func (ru *run) verify() error {
	r := ru.r
	if r.o.DryRun || ru.state() == nil || len(ru.posted) == 0 && !ru.slowWrite {
		return nil
	}
	cs, err := ru.reread()
	if err != nil {
		r.o.Logger.Warn("could not read comments back after writing", "issue", ru.number, "err", err)
		return nil
	}
	first := r.loader().FirstByMarker(cs, ru.number, ru.loaded.State)
	byID := map[int64]forge.Comment{}
	for _, c := range cs {
		byID[c.ID] = c
	}
	notes, again, err := writes.DeleteDuplicates(ru.ctx, r.o.Forge, r.o.Logger, ru.number, ru.posted, first)
	ru.notes = append(ru.notes, notes...)
	if err != nil {
		return err
	}
	if ru.wroteID != 0 && !again {
		if c, ok := byID[ru.wroteID]; !ok || !writes.SameBody(c.Body, ru.wroteBody) {
			r.o.Logger.Warn("state comment changed after our write; applying again", "issue", ru.number, "comment", ru.wroteID)
			again = true
		}
	}
	if ru.wrote && !again && ru.unseenInput(cs) {
		again = true
	}
	if again {
		return errRecheck
	}
	return nil
}

// unseenInput reports a comment that could act, posted after the load and
// not handled by this pass (comments.Unseen).
func (ru *run) unseenInput(cs []forge.Comment) bool {
	return comments.Unseen(cs, ru.loaded.Seen, ru.r.trusted, ru.state(), ru.parse)
}

func (ru *run) wasRefused(fp string) bool {
	return writes.Refused(ru.state(), fp)
}

// refuse records a request GitHub refused with 422; it is given up (the
// log says why) rather than failing the run or being sent again.
func (ru *run) refuse(fp string, err error) {
	ru.r.o.Logger.Error("GitHub refused a request (422); not sending it again", "issue", ru.number, "request", fp, "err", err)
	ru.notes = append(ru.notes, "refused by GitHub, given up: "+fp+": "+err.Error())
	if ru.state() == nil || ru.wasRefused(fp) {
		return
	}
	// The engine remembers it (written at the end of the pass); the error
	// is already logged, so a failed apply (none is expected) only loses
	// the memory.
	if err := ru.apply(events.Refused{Request: fp}); err != nil {
		ru.r.o.Logger.Warn("could not remember a refused request", "issue", ru.number, "err", err)
	}
}
