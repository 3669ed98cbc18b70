package appmode

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Holds remembers the issues whose sweep pass the GitHub budget cut, until
// the hold ends, shared by the replicas (the dashboard's store implements
// it: in Redis with REDIS_URL). The issue's next pass, on any replica,
// carries the hold into its state.
type Holds interface {
	Hold(ctx context.Context, h model.Hold) error
	Held(ctx context.Context, key string) (model.Hold, bool, error)
	Release(ctx context.Context, key string) error
}

// holdOf is why and until when the budget holds installation's background
// work, as the shared record says; rl (what the held request returned)
// when the record says nothing (GitHub itself answered the limit).
func (a *App) holdOf(ctx context.Context, installation int64, rl *forge.RateLimitError) (time.Time, state.HoldReason) {
	if hs, err := a.o.Budget.Held(ctx, []int64{installation}); err == nil && len(hs) == 1 {
		return hs[0].Until, state.HoldReason(hs[0].Reason.String())
	}
	if rl.Secondary {
		return rl.Until, state.HeldRetryAfter
	}
	return rl.Until, state.HeldSpent
}

// hold remembers that the budget cut the sweep's pass of issue n (err is
// the pass's error): its next pass records the wait in its state. Not a
// GitHub call: the write that would record it now is background work the
// budget holds too.
func (a *App) hold(ctx context.Context, installation int64, repo string, n int, err error, log *slog.Logger) {
	var rl *forge.RateLimitError
	if !errors.As(err, &rl) {
		return
	}
	until, why := a.holdOf(ctx, installation, rl)
	h := model.Hold{Installation: installation, Repo: repo, Issue: n, Until: until, Reason: why}
	if err := a.o.Holds.Hold(ctx, h); err != nil {
		log.Warn("could not remember the issue the budget held", "issue", n, "err", err)
	}
}

// carry is the reconcile's Carry for repo: an interactive pass of an issue
// whose sweep pass the budget cut steps the hold in (recorded if the pass
// writes anyway); a sweep pass takes the hold over (releases it: if the
// budget cuts it again, hold records it again).
func (a *App) carry(repo string) func(ctx context.Context, n int) []events.Event {
	return func(ctx context.Context, n int) []events.Event {
		key := model.Key(repo, n)
		if budget.ClassOf(ctx) == budget.Background {
			if err := a.o.Holds.Release(ctx, key); err != nil {
				a.log.Warn("could not release the issue the budget held", "repo", repo, "issue", n, "err", err)
			}
			return nil
		}
		h, ok, err := a.o.Holds.Held(ctx, key)
		if err != nil {
			a.log.Warn("could not read whether the budget held the issue", "repo", repo, "issue", n, "err", err)
		}
		if !ok {
			return nil
		}
		return []events.Event{events.BackgroundHeld{Until: h.Until, Reason: h.Reason}}
	}
}
