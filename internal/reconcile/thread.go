package reconcile

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/load"
	"github.com/autopilot-dev/autopilot/internal/reconcile/thread"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// How a pass reads the thread (the first page and what is new since the
// state's watermark) is package thread's, and what it finds there package
// load's; this file keeps the next watermark.

// loader loads this repository's issues.
func (r *Reconciler) loader() load.Loader {
	return load.Loader{Forge: r.o.Forge, Now: r.o.Now, Logger: r.o.Logger, BotLogin: r.o.BotLogin, AppID: r.o.AppID, StateKey: r.o.StateKey}
}

// reader is the thread reader of this repository.
func (r *Reconciler) reader() thread.Reader { return r.loader().Reader() }

// trusted reports a comment the configured bot wrote (load.Loader.Trusted).
func (r *Reconciler) trusted(c forge.Comment) bool { return r.loader().Trusted(c) }

// loadIsReread reports that the load can stand in for the version re-read
// before a state write (thread.Reader.IsReread); the gap to the PATCH is
// then noted from the load (noteGap), so a slow write is read back
// (verify) as after a re-read.
func (ru *run) loadIsReread() bool {
	return ru.r.reader().IsReread(ru.loaded.Win, ru.outside)
}

// reread lists the same window again: for the version re-read before a
// write and the read-back after it.
func (ru *run) reread() ([]forge.Comment, error) {
	ld := ru.loaded
	return ru.r.reader().Reread(ru.ctx, ru.number, &ld.Issue, ld.Win, ld.Comments, ld.StateComment)
}

// nextSince is the watermark the state written by this pass carries: a
// little behind the newest comment read, and never past a comment (on the
// issue or a linked PR) that is still unhandled or that this pass reacts
// to, so the next pass reads it (and sees whether the reaction happened).
func (ru *run) nextSince() time.Time {
	pendingReact := map[int64]bool{}
	for _, e := range ru.effects {
		if e.Kind == state.EffReact {
			pendingReact[e.Target] = true
		}
	}
	watch := append(append([]forge.Comment(nil), ru.loaded.Human...), ru.prSeen...)
	return thread.Next(ru.loaded.Comments, ru.loaded.Win, ru.state().Since, watch, func(c forge.Comment) bool {
		return !engine.Handled(ru.state(), c.ID) || pendingReact[c.ID]
	})
}

// prSince is the watermark for a linked PR's conversation: the issue's,
// for a PR the state already knew (its older comments were read when it
// was linked); zero (everything) for one linked since.
func (ru *run) prSince(pr int) time.Time {
	s := ru.loaded.State
	if s == nil || ru.loaded.Win.Since.IsZero() || !linked(s, pr) {
		return time.Time{}
	}
	return ru.loaded.Win.Since
}

// listPR reads a linked PR's conversation from its watermark.
func (ru *run) listPR(pr int) ([]forge.Comment, error) {
	return ru.r.reader().ListSince(ru.ctx, pr, ru.prSince(pr))
}

// owedReactions are the reactions the stored ledger names that the
// comments read do not show (outbox.OwedReactions decides).
func (ru *run) owedReactions() []state.Effect {
	var read []outbox.Rollup
	for _, list := range [][]forge.Comment{ru.loaded.Human, ru.prSeen} {
		for _, c := range list {
			read = append(read, outbox.Rollup{ID: c.ID, Reactions: c.Reactions})
		}
	}
	return outbox.OwedReactions(ru.loaded.State, read)
}

// noteGap records a state write answered slowly after its re-read (the
// adapter's mutation spacing, a slow GitHub).
func (ru *run) noteGap(reread time.Time) {
	if ru.r.o.Now().Sub(reread) > thread.ReadBackGap {
		ru.slowWrite = true
	}
}
