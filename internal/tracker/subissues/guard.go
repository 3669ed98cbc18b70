package subissues

import (
	"context"
	"errors"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// guard is the tracker's way to GitHub: every request goes through it, so
// every limit answer (403 or 429 with retry-after, whatever the call) is
// remembered, and no request of any kind is sent inside the window it
// opened; the sync reads the window back as its retry time
// (tracker.Limiter).
type guard struct {
	api tracker.SubIssueAPI
	g   *Tracker
}

var _ tracker.SubIssueAPI = guard{}

// LimitedUntil is the end of the last limit window GitHub announced to this
// tracker (zero when none).
func (g *Tracker) LimitedUntil() time.Time { return g.limitedUntil }

var _ tracker.Limiter = (*Tracker)(nil)

func (w guard) closed() error {
	now := w.g.now()
	if now.Before(w.g.limitedUntil) {
		return &tracker.RateLimitError{RetryAfter: w.g.limitedUntil.Sub(now), Reason: "github limit window"}
	}
	return nil
}

func (w guard) seen(err error) error {
	var rl *tracker.RateLimitError
	if errors.As(err, &rl) {
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = tasksync.DefaultRetryAfter
		}
		if at := w.g.now().Add(wait); at.After(w.g.limitedUntil) {
			w.g.limitedUntil = at
		}
	}
	return err
}

func (w guard) CreateIssue(ctx context.Context, title, body string, labels []string) (tracker.GHIssue, error) {
	if err := w.closed(); err != nil {
		return tracker.GHIssue{}, err
	}
	is, err := w.api.CreateIssue(ctx, title, body, labels)
	return is, w.seen(err)
}

func (w guard) SubIssues(ctx context.Context, parent int) ([]tracker.GHIssue, error) {
	if err := w.closed(); err != nil {
		return nil, err
	}
	list, err := w.api.SubIssues(ctx, parent)
	return list, w.seen(err)
}

func (w guard) AddSubIssue(ctx context.Context, parent int, childID int64) error {
	if err := w.closed(); err != nil {
		return err
	}
	return w.seen(w.api.AddSubIssue(ctx, parent, childID))
}

func (w guard) AddBlockedBy(ctx context.Context, number int, blockerID int64) error {
	if err := w.closed(); err != nil {
		return err
	}
	return w.seen(w.api.AddBlockedBy(ctx, number, blockerID))
}

func (w guard) BlockedBy(ctx context.Context, number int) ([]tracker.GHIssue, error) {
	if err := w.closed(); err != nil {
		return nil, err
	}
	list, err := w.api.BlockedBy(ctx, number)
	return list, w.seen(err)
}

func (w guard) ListLabeled(ctx context.Context, label string, since time.Time) ([]tracker.GHIssue, error) {
	if err := w.closed(); err != nil {
		return nil, err
	}
	list, err := w.api.ListLabeled(ctx, label, since)
	return list, w.seen(err)
}

func (w guard) ReadIssue(ctx context.Context, number int) (tracker.GHIssue, error) {
	if err := w.closed(); err != nil {
		return tracker.GHIssue{}, err
	}
	is, err := w.api.ReadIssue(ctx, number)
	return is, w.seen(err)
}

func (w guard) CloseIssue(ctx context.Context, number int) error {
	if err := w.closed(); err != nil {
		return err
	}
	return w.seen(w.api.CloseIssue(ctx, number))
}
