// Package thread reads an issue's thread for reconcile: the first page and
// what is new since the state's watermark (REST), or the most recently
// updated comments back to it (GraphQL), and reads the same window again
// before a state write and after it.
//
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
// version re-read before the write (Reader.IsReread).
package thread

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/pass"

	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// restPage is the REST API's longest page of comments. A thread known to
// fit on one page is read through REST, whose repeated reads in a pass
// (the re-read before the write, the read-back) cost nothing while
// nothing changed (304); a longer one, or one of unknown length, through
// GraphQL, which also brings the issue when the event carried none.
const restPage = 100

// ReadBackGap is the re-read-to-PATCH gap above which a pass that posted
// nothing reads the thread back (reconcile's verify): room for a
// concurrent run's load, re-read and write, each a round trip to GitHub.
const ReadBackGap = 500 * time.Millisecond

// Window is how a pass read the thread.
type Window struct {
	// Since: the first page plus every comment updated since (zero: not a
	// windowed read).
	Since time.Time
	// HeadOnly: the first page held the whole thread.
	HeadOnly bool
	// Fresh: a first start read only the first page of a longer thread;
	// Since is when it began.
	Fresh bool
	// Recent: read through forge.RecentReader, back to Since (to the
	// thread's start when Since is zero).
	Recent bool
	// At and Requests: when a recent read ended and the forge's request
	// count then (IsReread).
	At       time.Time
	Requests int64
}

// Reader reads the threads of one repository's issues.
type Reader struct {
	Forge  forge.Forge
	Now    func() time.Time
	Logger *slog.Logger
	// Watermark is the Since of the newest trusted state on a page of
	// issue n's thread (zero when there is none).
	Watermark func(page []forge.Comment, n int) time.Time
}

// Read reads issue n (unless snap is the event's copy of it) and what a
// pass needs of its thread. Through GraphQL (forge.RecentReader):
// readRecent, the issue included. Otherwise through REST: the first page
// alone when it holds everything (or fresh: a run's first start, on an
// issue no run ever labelled), the first page plus the comments since the
// watermark of the state found there, and all of it otherwise (the forge
// cannot read part of a thread, a state from before watermarks, or a run
// begun after 100 comments, whose state comment is not on the first page).
// starting: the trigger starts a run.
func (rd Reader) Read(ctx context.Context, n int, snap *forge.Issue, starting bool) (forge.Issue, []forge.Comment, Window, error) {
	if rr, ok := rd.Forge.(forge.RecentReader); ok && (snap == nil || snap.Comments == 0 || snap.Comments > restPage) {
		is, cs, w, err := rd.readRecent(ctx, rr, n, snap, starting, time.Time{})
		if err == nil {
			return is, cs, w, nil
		}
		if !restInstead(ctx, err) {
			return forge.Issue{}, nil, Window{}, fmt.Errorf("read #%d and its comments: %w", n, err)
		}
		rd.Logger.Warn("reading the thread through GraphQL failed; reading it through REST", "issue", n, "err", err)
	}
	var is forge.Issue
	if snap != nil {
		is = *snap
	} else {
		var err error
		if is, err = rd.Forge.GetIssue(ctx, n); err != nil {
			return forge.Issue{}, nil, Window{}, fmt.Errorf("read issue #%d: %w", n, err)
		}
	}
	cs, w, err := rd.readREST(ctx, n, fresh(is, starting))
	if err != nil {
		return forge.Issue{}, nil, Window{}, fmt.Errorf("list comments of #%d: %w", n, err)
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
		if labels.Managed(l) {
			return false
		}
	}
	return true
}

// readREST reads the thread through REST (see Read).
func (rd Reader) readREST(ctx context.Context, n int, fresh bool) ([]forge.Comment, Window, error) {
	tr, ok := rd.Forge.(forge.ThreadReader)
	if !ok {
		cs, err := rd.Forge.ListComments(ctx, n)
		return cs, Window{}, err
	}
	head, more, err := tr.ListCommentsHead(ctx, n)
	if err != nil {
		return nil, Window{}, err
	}
	if !more {
		return head, Window{HeadOnly: true}, nil
	}
	since := rd.Watermark(head, n)
	if since.IsZero() && fresh {
		// A first start: what follows the first page is history from
		// before the run; its watermark starts now (less the slack).
		return head, Window{Since: rd.Now().Add(-pass.Slack).UTC().Truncate(time.Second), Fresh: true}, nil
	}
	if since.IsZero() {
		cs, err := rd.Forge.ListComments(ctx, n)
		return cs, Window{}, err
	}
	rest, err := tr.ListCommentsSince(ctx, n, since)
	if err != nil {
		return nil, Window{}, err
	}
	return Merge(head, rest), Window{Since: since}, nil
}

// readRecent reads issue n (unless snap is the event's copy of it) and
// its thread most recently updated first, back to since when it is known
// (a re-read), else back to the watermark of the newest trusted state on
// the first page that holds one (the whole thread when none does: a state
// from before watermarks, or none at all). A first start (fresh) reads one
// page: what is older is history from before the run, and its watermark
// starts now (less the slack).
func (rd Reader) readRecent(ctx context.Context, rr forge.RecentReader, n int, snap *forge.Issue, starting bool, since time.Time) (forge.Issue, []forge.Comment, Window, error) {
	known := !since.IsZero()
	rec, err := rr.ReadRecent(ctx, n, func(is forge.Issue, page []forge.Comment) bool {
		if snap != nil {
			is = *snap
		}
		if !known {
			if w := rd.Watermark(page, n); !w.IsZero() {
				since, known = w, true
			}
		}
		if !known {
			return !fresh(is, starting)
		}
		return len(page) > 0 && !page[0].UpdatedAt.Before(since)
	})
	if err != nil {
		return forge.Issue{}, nil, Window{}, err
	}
	is := rec.Issue
	if snap != nil {
		is = *snap
	}
	w := Window{Recent: true, At: rd.Now(), Requests: rr.Requests()}
	switch {
	case rec.All:
		w.HeadOnly = true
	case !known:
		w.Since, w.Fresh = rd.Now().Add(-pass.Slack).UTC().Truncate(time.Second), true
	default:
		w.Since = since
	}
	return is, Merge(rec.Comments, nil), w, nil
}

// restInstead reports a failed GraphQL read worth repeating through REST:
// anything but a cancelled job, refused credentials (REST refuses them
// too; App mode mints a new token) or a secondary rate limit (which holds
// every request back). A spent primary budget is GraphQL's own.
func restInstead(ctx context.Context, err error) bool {
	var rl *forge.RateLimitError
	return ctx.Err() == nil && !errors.Is(err, forge.ErrUnauthorized) && !(errors.As(err, &rl) && rl.Secondary)
}

// IsReread reports that a load read through w can stand in for the
// version re-read before a state write: it was a recent read (a GraphQL
// read is never a free 304), neither the forge nor the tracker was asked
// anything since (outside: the pass sent requests elsewhere than the
// forge), and it is at most ReadBackGap old, the window a re-read leaves
// before its PATCH; the gap to the PATCH is then noted from the load, so
// a slow write is read back as after a re-read.
func (rd Reader) IsReread(w Window, outside bool) bool {
	rr, ok := rd.Forge.(forge.RecentReader)
	if !ok || !w.Recent || w.Requests < 0 || outside {
		return false
	}
	return rr.Requests() == w.Requests && rd.Now().Sub(w.At) <= ReadBackGap
}

// Reread lists the window w of issue n's thread again: for the version
// re-read before a write and the read-back after it. is is the issue as
// loaded, read the comments the load read, stateComment the state comment
// (nil when none). A since window needs only the comments since (the state
// comment was updated after its own watermark); after a first start on a
// long thread, those since its new state comment appeared (GitHub's clock).
func (rd Reader) Reread(ctx context.Context, n int, is *forge.Issue, w Window, read []forge.Comment, stateComment *forge.Comment) ([]forge.Comment, error) {
	if sc := stateComment; w.Fresh && sc != nil && !sc.CreatedAt.IsZero() {
		w.Since = sc.CreatedAt.Add(-pass.Slack).UTC().Truncate(time.Second)
	}
	if rr, ok := rd.Forge.(forge.RecentReader); ok && w.Recent {
		// What a re-read looks for (a write, a duplicate, an input) came
		// after the load: back to the newest comment it read (GitHub's
		// clock) less the slack is enough, and costs one page.
		since := w.Since
		for _, c := range read {
			if b := c.UpdatedAt.Add(-pass.Slack); b.After(since) {
				since = b
			}
		}
		_, cs, _, err := rd.readRecent(ctx, rr, n, is, false, since.UTC().Truncate(time.Second))
		if err == nil || !restInstead(ctx, err) {
			return cs, err
		}
		rd.Logger.Warn("re-reading the thread through GraphQL failed; reading it through REST", "issue", n, "err", err)
		if w.Since.IsZero() {
			return rd.Forge.ListComments(ctx, n)
		}
	}
	tr, ok := rd.Forge.(forge.ThreadReader)
	switch {
	case !ok || !w.HeadOnly && w.Since.IsZero():
		return rd.Forge.ListComments(ctx, n)
	case w.HeadOnly:
		head, more, err := tr.ListCommentsHead(ctx, n)
		if err != nil || !more {
			return head, err
		}
		// The thread outgrew the first page during this pass.
		return rd.Forge.ListComments(ctx, n)
	default:
		return tr.ListCommentsSince(ctx, n, w.Since)
	}
}

// ListSince reads a linked PR's conversation from since (all of it when
// since is zero or the forge cannot read part of a thread).
func (rd Reader) ListSince(ctx context.Context, pr int, since time.Time) ([]forge.Comment, error) {
	if tr, ok := rd.Forge.(forge.ThreadReader); ok && !since.IsZero() {
		cs, err := tr.ListCommentsSince(ctx, pr, since)
		if err != nil {
			return nil, fmt.Errorf("since %s: %w", since.Format(time.RFC3339), err)
		}
		return cs, nil
	}
	return rd.Forge.ListComments(ctx, pr)
}

// Merge joins two listings (the later copy wins) in thread order.
func Merge(a, b []forge.Comment) []forge.Comment {
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
