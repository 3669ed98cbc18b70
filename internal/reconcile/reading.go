package reconcile

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/load"
	"github.com/autopilot-dev/autopilot/internal/reconcile/thread"
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

// noteGap records a state write answered slowly after its re-read (the
// adapter's mutation spacing, a slow GitHub).
func (ru *run) noteGap(reread time.Time) {
	if ru.r.o.Now().Sub(reread) > thread.ReadBackGap {
		ru.slowWrite = true
	}
}
