package appmode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// view is the forge one job (or one repository's sweep) sees: the cached
// adapter, plus two things only App mode needs.
//
//   - Migration: comments by the legacy bot (Options.AdoptFrom) read as the
//     App's own, so a run the Action started is picked up (its state comment,
//     still checked against the state key, and its markers, so nothing it
//     posted is posted again). Such a comment is never edited: editing it
//     answers forge.ErrNotFound, on which reconcile writes the state as a
//     new comment, by the App, one version up; the highest version wins from
//     then on.
//   - Metrics: every state comment read or written updates the Jira outbox
//     gauge, at no extra API call.
type view struct {
	forge.Forge
	a *App

	mu     sync.Mutex
	legacy map[int64]bool // comment ids adopted from AdoptFrom
}

func (a *App) wrap(f forge.Forge) forge.Forge {
	return &view{Forge: f, a: a, legacy: map[int64]bool{}}
}

// adopt presents a legacy bot's comment as the App's and remembers its id.
func (v *view) adopt(c *forge.Comment) {
	from := v.a.o.AdoptFrom
	if from == "" || !c.Author.IsBot() || !strings.EqualFold(c.Author.Login, from) {
		return
	}
	c.Author.Login = v.a.o.BotLogin
	c.AppID = v.a.o.AppID
	v.mu.Lock()
	v.legacy[c.ID] = true
	v.mu.Unlock()
}

// ListComments implements forge.Forge.
func (v *view) ListComments(ctx context.Context, number int) ([]forge.Comment, error) {
	cs, err := v.Forge.ListComments(ctx, number)
	if err != nil {
		return nil, err
	}
	v.seen(cs, number)
	return cs, nil
}

// seen adopts legacy comments in place and updates the outbox gauge from
// the newest state among them.
func (v *view) seen(cs []forge.Comment, number int) {
	for i := range cs {
		v.adopt(&cs[i])
	}
	var newest *state.State
	for _, c := range cs {
		if s := v.ownState(c, number); s != nil && (newest == nil || s.Version > newest.Version) {
			newest = s
		}
	}
	if newest != nil {
		v.a.outbox.set(v.Repo(), number, newest)
	}
}

// ListCommentsHead implements forge.ThreadReader (the whole thread when
// the adapter cannot read part of it).
func (v *view) ListCommentsHead(ctx context.Context, number int) ([]forge.Comment, bool, error) {
	tr, ok := v.Forge.(forge.ThreadReader)
	if !ok {
		cs, err := v.ListComments(ctx, number)
		return cs, false, err
	}
	cs, more, err := tr.ListCommentsHead(ctx, number)
	if err != nil {
		return nil, false, err
	}
	v.seen(cs, number)
	return cs, more, nil
}

// ListCommentsSince implements forge.ThreadReader.
func (v *view) ListCommentsSince(ctx context.Context, number int, since time.Time) ([]forge.Comment, error) {
	tr, ok := v.Forge.(forge.ThreadReader)
	if !ok {
		return v.ListComments(ctx, number)
	}
	cs, err := tr.ListCommentsSince(ctx, number, since)
	if err != nil {
		return nil, err
	}
	v.seen(cs, number)
	return cs, nil
}

// ReadRecent implements forge.RecentReader when the adapter does (the
// view must not hide it: reconcile would read whole threads).
func (v *view) ReadRecent(ctx context.Context, number int, more func(forge.Issue, []forge.Comment) bool) (forge.Recent, error) {
	rr, ok := v.Forge.(forge.RecentReader)
	if !ok {
		is, err := v.GetIssue(ctx, number)
		if err != nil {
			return forge.Recent{}, err
		}
		cs, err := v.ListComments(ctx, number)
		return forge.Recent{Issue: is, Comments: cs, All: true}, err
	}
	rec, err := rr.ReadRecent(ctx, number, func(is forge.Issue, page []forge.Comment) bool {
		for i := range page {
			v.adopt(&page[i])
		}
		return more(is, page)
	})
	if err != nil {
		return forge.Recent{}, err
	}
	v.seen(rec.Comments, number)
	return rec, nil
}

// Requests implements forge.RecentReader (-1, "not counted", when the
// adapter does not count).
func (v *view) Requests() int64 {
	if rr, ok := v.Forge.(forge.RecentReader); ok {
		return rr.Requests()
	}
	return -1
}

// GetComment implements forge.Forge.
func (v *view) GetComment(ctx context.Context, id int64) (forge.Comment, error) {
	c, err := v.Forge.GetComment(ctx, id)
	if err == nil {
		v.adopt(&c)
	}
	return c, err
}

// CreateComment implements forge.Forge.
func (v *view) CreateComment(ctx context.Context, number int, body string) (forge.Comment, error) {
	c, err := v.Forge.CreateComment(ctx, number, body)
	if err == nil {
		v.written(number, body)
	}
	return c, err
}

// EditComment implements forge.Forge; a legacy comment is left alone.
func (v *view) EditComment(ctx context.Context, id int64, body string) (forge.Comment, error) {
	v.mu.Lock()
	legacy := v.legacy[id]
	v.mu.Unlock()
	if legacy {
		return forge.Comment{}, fmt.Errorf("comment %d was written by %s before the move to the App and is not edited: %w",
			id, v.a.o.AdoptFrom, forge.ErrNotFound)
	}
	c, err := v.Forge.EditComment(ctx, id, body)
	if err == nil {
		v.written(c.IssueNumber, body)
	}
	return c, err
}

// ownState parses c when it is a state comment the App trusts (after
// adoption): nil otherwise, or when it does not verify.
func (v *view) ownState(c forge.Comment, number int) *state.State {
	if !strings.HasPrefix(c.Body, state.Marker) || !c.Author.IsBot() ||
		!strings.EqualFold(c.Author.Login, v.a.o.BotLogin) || c.AppID != v.a.o.AppID {
		return nil
	}
	return v.parse(c.Body, number)
}

// written notes a state comment the App just wrote.
func (v *view) written(number int, body string) {
	if number <= 0 || !strings.HasPrefix(body, state.Marker) {
		return
	}
	if s := v.parse(body, number); s != nil {
		v.a.outbox.set(v.Repo(), number, s)
	}
}

func (v *view) parse(body string, number int) *state.State {
	s, err := codec.Parse(body, codec.Want{Repo: v.Repo(), Issue: number, Key: []byte(v.a.o.Wiring.Inputs.StateKey)})
	if err != nil && !errors.Is(err, codec.ErrEdited) {
		return nil
	}
	return s
}

// outboxGauge sums, over the issues seen since start, the tasks whose Jira
// create is still owed, into autopilot_jira_outbox_size.
type outboxGauge struct {
	m *metrics.Metrics

	mu    sync.Mutex
	per   map[string]int // "owner/repo#12" -> tasks waiting
	total int
}

func newOutboxGauge(m *metrics.Metrics) *outboxGauge {
	return &outboxGauge{m: m, per: map[string]int{}}
}

// set records the issue's latest state.
func (g *outboxGauge) set(repo string, number int, s *state.State) {
	if g.m == nil {
		return
	}
	key := server.IssueLockKey(strings.ToLower(repo), number)
	n := tasksync.PendingCount(s) // as the state comment's "<tracker>: pending (n)"
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total += n - g.per[key]
	if n == 0 {
		delete(g.per, key)
	} else {
		g.per[key] = n
	}
	g.m.SetJiraOutbox(g.total)
}
