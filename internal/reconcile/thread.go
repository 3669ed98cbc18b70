package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Reading a thread costs the same at 10 and 10,000 comments. Through
// GraphQL (forge.RecentReader) the comments come most recently updated
// first: every state write edits the state comment, so the first page
// holds it and every comment updated since the state's watermark
// (State.Since), and earlier pages are read only while they still hold
// comments updated since (or until the state comment is found). Without
// it (or when that read fails), through REST: the first page (which holds
// the state comment, posted when the run began) and the comments updated
// since the watermark. Every comment updated before the watermark was read
// by the pass that wrote it, and an edit brings a comment back (both
// orders and GitHub's since go by updated_at), so nothing is skipped.
// Repeated REST reads in one pass send the same requests, which cost
// nothing when nothing changed (ETag, 304); a GraphQL read cannot be
// conditional, so a load with nothing sent after it stands in for the
// version re-read before the write (loadIsReread).

// restPage is the REST API's longest page of comments. A thread known to
// fit on one page is read through REST, whose repeated reads in a pass
// (the re-read before the write, the read-back) cost nothing while
// nothing changed (304); a longer one, or one of unknown length, through
// GraphQL, which also brings the issue when the event carried none.
const restPage = 100

// threadSlack keeps the watermark this far behind the newest comment a pass
// read: a comment GitHub stamped earlier but listed later (a write in
// flight during the read; equal timestamps) is read again, never skipped.
const threadSlack = 2 * time.Minute

// window is how a pass read the thread.
type window struct {
	// since: the first page plus every comment updated since (zero: not a
	// windowed read).
	since time.Time
	// headOnly: the first page held the whole thread.
	headOnly bool
	// fresh: a first start read only the first page of a longer thread;
	// since is when it began.
	fresh bool
	// recent: read through forge.RecentReader, back to since (to the
	// thread's start when since is zero).
	recent bool
	// at and requests: when a recent read ended and the forge's request
	// count then (loadIsReread).
	at       time.Time
	requests int64
}

// readThread reads issue n (unless snap is the event's copy of it) and
// what a pass needs of its thread. Through GraphQL (forge.RecentReader):
// readRecent, the issue included. Otherwise through REST: the first page
// alone when it holds everything (or fresh: a run's first start, on an
// issue no run ever labelled), the first page plus the comments since the
// watermark of the state found there, and all of it otherwise (the forge
// cannot read part of a thread, a state from before watermarks, or a run
// begun after 100 comments, whose state comment is not on the first page).
// starting: the trigger starts a run.
func (r *Reconciler) readThread(ctx context.Context, n int, snap *forge.Issue, starting bool) (forge.Issue, []forge.Comment, window, error) {
	if rr, ok := r.o.Forge.(forge.RecentReader); ok && (snap == nil || snap.Comments == 0 || snap.Comments > restPage) {
		is, cs, w, err := r.readRecent(ctx, rr, n, snap, starting, time.Time{})
		if err == nil {
			return is, cs, w, nil
		}
		if !restInstead(ctx, err) {
			return forge.Issue{}, nil, window{}, fmt.Errorf("read #%d and its comments: %w", n, err)
		}
		r.o.Logger.Warn("reading the thread through GraphQL failed; reading it through REST", "issue", n, "err", err)
	}
	var is forge.Issue
	if snap != nil {
		is = *snap
	} else {
		var err error
		if is, err = r.o.Forge.GetIssue(ctx, n); err != nil {
			return forge.Issue{}, nil, window{}, fmt.Errorf("read issue #%d: %w", n, err)
		}
	}
	cs, w, err := r.readREST(ctx, n, fresh(is, starting))
	if err != nil {
		return forge.Issue{}, nil, window{}, fmt.Errorf("list comments of #%d: %w", n, err)
	}
	return is, cs, w, nil
}

// fresh: a start on an issue that carries none of the bot's labels, so no
// run ever wrote a state there; what the thread holds is history from
// before the run.
func fresh(is forge.Issue, starting bool) bool {
	if !starting {
		return false
	}
	for _, l := range is.Labels {
		if managed(l) {
			return false
		}
	}
	return true
}

// readREST reads the thread through REST (see readThread).
func (r *Reconciler) readREST(ctx context.Context, n int, fresh bool) ([]forge.Comment, window, error) {
	tr, ok := r.o.Forge.(forge.ThreadReader)
	if !ok {
		cs, err := r.o.Forge.ListComments(ctx, n)
		return cs, window{}, err
	}
	head, more, err := tr.ListCommentsHead(ctx, n)
	if err != nil {
		return nil, window{}, err
	}
	if !more {
		return head, window{headOnly: true}, nil
	}
	since := r.watermark(head, n)
	if since.IsZero() && fresh {
		// A first start: what follows the first page is history from
		// before the run; its watermark starts now (less the slack).
		return head, window{since: r.o.Now().Add(-threadSlack).UTC().Truncate(time.Second), fresh: true}, nil
	}
	if since.IsZero() {
		cs, err := r.o.Forge.ListComments(ctx, n)
		return cs, window{}, err
	}
	rest, err := tr.ListCommentsSince(ctx, n, since)
	if err != nil {
		return nil, window{}, err
	}
	return mergeComments(head, rest), window{since: since}, nil
}

// readRecent reads issue n (unless snap is the event's copy of it) and
// its thread most recently updated first, back to since when it is known
// (a re-read), else back to the watermark of the newest trusted state on
// the first page that holds one (the whole thread when none does: a state
// from before watermarks, or none at all). A first start (fresh) reads one
// page: what is older is history from before the run, and its watermark
// starts now (less the slack).
func (r *Reconciler) readRecent(ctx context.Context, rr forge.RecentReader, n int, snap *forge.Issue, starting bool, since time.Time) (forge.Issue, []forge.Comment, window, error) {
	known := !since.IsZero()
	rec, err := rr.ReadRecent(ctx, n, func(is forge.Issue, page []forge.Comment) bool {
		if snap != nil {
			is = *snap
		}
		if !known {
			if w := r.watermark(page, n); !w.IsZero() {
				since, known = w, true
			}
		}
		if !known {
			return !fresh(is, starting)
		}
		return len(page) > 0 && !page[0].UpdatedAt.Before(since)
	})
	if err != nil {
		return forge.Issue{}, nil, window{}, err
	}
	is := rec.Issue
	if snap != nil {
		is = *snap
	}
	w := window{recent: true, at: r.o.Now(), requests: rr.Requests()}
	switch {
	case rec.All:
		w.headOnly = true
	case !known:
		w.since, w.fresh = r.o.Now().Add(-threadSlack).UTC().Truncate(time.Second), true
	default:
		w.since = since
	}
	return is, mergeComments(rec.Comments, nil), w, nil
}

// restInstead reports a failed GraphQL read worth repeating through REST:
// anything but a cancelled job, refused credentials (REST refuses them
// too; App mode mints a new token) or a secondary rate limit (which holds
// every request back). A spent primary budget is GraphQL's own.
func restInstead(ctx context.Context, err error) bool {
	var rl *forge.RateLimitError
	return ctx.Err() == nil && !errors.Is(err, forge.ErrUnauthorized) && !(errors.As(err, &rl) && rl.Secondary)
}

// loadIsReread reports that the load can stand in for the version re-read
// before a state write: it was a recent read (a GraphQL read is never a
// free 304), neither the forge nor the tracker was asked anything since,
// and it is at most
// readBackGap old, the window a re-read leaves before its PATCH; the gap
// to the PATCH is then noted from the load (noteGap), so a slow write is
// read back (verify) as after a re-read.
func (ru *run) loadIsReread() bool {
	w := ru.loaded.win
	rr, ok := ru.r.o.Forge.(forge.RecentReader)
	if !ok || !w.recent || w.requests < 0 || ru.outside {
		return false
	}
	return rr.Requests() == w.requests && ru.r.o.Now().Sub(w.at) <= readBackGap
}

// reread lists the same window again: for the version re-read before a
// write and the read-back after it. A since window needs only the comments
// since (the state comment was updated after its own watermark); after a
// first start on a long thread, those since its new state comment appeared
// (GitHub's clock).
func (ru *run) reread() ([]forge.Comment, error) {
	r, ctx, n, w := ru.r, ru.ctx, ru.number, ru.loaded.win
	if sc := ru.loaded.stateComment; w.fresh && sc != nil && !sc.CreatedAt.IsZero() {
		w.since = sc.CreatedAt.Add(-threadSlack).UTC().Truncate(time.Second)
	}
	if rr, ok := r.o.Forge.(forge.RecentReader); ok && w.recent {
		// What a re-read looks for (a write, a duplicate, an input) came
		// after the load: back to the newest comment it read (GitHub's
		// clock) less the slack is enough, and costs one page.
		since := w.since
		for _, c := range ru.loaded.comments {
			if b := c.UpdatedAt.Add(-threadSlack); b.After(since) {
				since = b
			}
		}
		_, cs, _, err := r.readRecent(ctx, rr, n, &ru.loaded.issue, false, since.UTC().Truncate(time.Second))
		if err == nil || !restInstead(ctx, err) {
			return cs, err
		}
		r.o.Logger.Warn("re-reading the thread through GraphQL failed; reading it through REST", "issue", n, "err", err)
		if w.since.IsZero() {
			return r.o.Forge.ListComments(ctx, n)
		}
	}
	tr, ok := r.o.Forge.(forge.ThreadReader)
	switch {
	case !ok || !w.headOnly && w.since.IsZero():
		return r.o.Forge.ListComments(ctx, n)
	case w.headOnly:
		head, more, err := tr.ListCommentsHead(ctx, n)
		if err != nil || !more {
			return head, err
		}
		// The thread outgrew the first page during this pass.
		return r.o.Forge.ListComments(ctx, n)
	default:
		return tr.ListCommentsSince(ctx, n, w.since)
	}
}

// watermark is the Since of the newest trusted state on the first page
// (zero when there is none).
func (r *Reconciler) watermark(head []forge.Comment, n int) time.Time {
	want := state.Want{Repo: r.o.Forge.Repo(), Issue: n, Key: r.o.StateKey}
	var best *state.State
	for _, c := range head {
		if !r.trusted(c) || firstLine(c.Body) != state.Marker {
			continue
		}
		s, err := state.Parse(c.Body, want)
		if s == nil || err != nil && !errors.Is(err, state.ErrEdited) {
			continue
		}
		if best == nil || s.Version > best.Version {
			best = s
		}
	}
	if best == nil {
		return time.Time{}
	}
	return best.Since
}

// mergeComments joins two listings (the later copy wins) in thread order.
func mergeComments(a, b []forge.Comment) []forge.Comment {
	byID := make(map[int64]int, len(a)+len(b))
	out := make([]forge.Comment, 0, len(a)+len(b))
	for _, list := range [][]forge.Comment{a, b} {
		for _, c := range list {
			if i, ok := byID[c.ID]; ok {
				out[i] = c
				continue
			}
			byID[c.ID] = len(out)
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// nextSince is the watermark the state written by this pass carries: a
// little behind the newest comment read, and never past a comment (on the
// issue or a linked PR) that is still unhandled or that this pass reacts
// to, so the next pass reads it (and sees whether the reaction happened).
func (ru *run) nextSince() time.Time {
	var newest time.Time
	for _, c := range ru.loaded.comments {
		if c.UpdatedAt.After(newest) {
			newest = c.UpdatedAt
		}
	}
	if ru.loaded.win.fresh {
		return ru.loaded.win.since
	}
	if newest.IsZero() {
		return ru.st.Since
	}
	w := newest.Add(-threadSlack)
	pendingReact := map[int64]bool{}
	for _, e := range ru.effects {
		if e.Kind == state.EffReact {
			pendingReact[e.Target] = true
		}
	}
	for _, list := range [][]forge.Comment{ru.loaded.human, ru.prSeen} {
		for _, c := range list {
			if !c.UpdatedAt.After(w) && (!engine.Handled(ru.st, c.ID) || pendingReact[c.ID]) {
				// A second earlier: read again whether GitHub's since
				// counts an equal timestamp or not.
				w = c.UpdatedAt.Add(-time.Second)
			}
		}
	}
	return w.UTC().Truncate(time.Second)
}

// prSince is the watermark for a linked PR's conversation: the issue's,
// for a PR the state already knew (its older comments were read when it
// was linked); zero (everything) for one linked since.
func (ru *run) prSince(pr int) time.Time {
	s := ru.loaded.state
	if s == nil || ru.loaded.win.since.IsZero() || !linked(s, pr) {
		return time.Time{}
	}
	return ru.loaded.win.since
}

// listPR reads a linked PR's conversation from its watermark.
func (ru *run) listPR(pr int) ([]forge.Comment, error) {
	since := ru.prSince(pr)
	if tr, ok := ru.r.o.Forge.(forge.ThreadReader); ok && !since.IsZero() {
		cs, err := tr.ListCommentsSince(ru.ctx, pr, since)
		if err != nil {
			return nil, fmt.Errorf("since %s: %w", since.Format(time.RFC3339), err)
		}
		return cs, nil
	}
	return ru.r.o.Forge.ListComments(ru.ctx, pr)
}

// owedReactions are the reactions the stored ledger names that the
// comments read do not show (engine.OwedReactions decides).
func (ru *run) owedReactions() []state.Effect {
	var read []engine.Rollup
	for _, list := range [][]forge.Comment{ru.loaded.human, ru.prSeen} {
		for _, c := range list {
			read = append(read, engine.Rollup{ID: c.ID, Reactions: c.Reactions})
		}
	}
	return engine.OwedReactions(ru.loaded.state, read)
}

// readBackGap is the re-read-to-PATCH gap above which a pass that posted
// nothing reads the thread back (verify): room for a concurrent run's load,
// re-read and write, each a round trip to GitHub.
const readBackGap = 500 * time.Millisecond

// noteGap records a state write answered slowly after its re-read (the
// adapter's mutation spacing, a slow GitHub).
func (ru *run) noteGap(reread time.Time) {
	if ru.r.o.Now().Sub(reread) > readBackGap {
		ru.slowWrite = true
	}
}
