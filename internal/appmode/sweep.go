package appmode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	gogh "github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/server"
)

// Sweep implements server.Sweeper: it lists the installation's
// repositories and reconciles, one issue at a time under that issue's
// lease, every open issue carrying the trigger label (starting a run where
// none exists) and every active run whose trigger label is gone. It catches up
// missed deliveries and fires executor timeouts and wall-clock limits. A
// repository that fails is reported and the others are still swept; a
// rate limit stops the whole sweep (the next one continues), saying so in
// one log line (installation, reason, until) and returning an error marked
// server.ErrHeld (a wait, not a failure, unless a repository failed before
// it), and the issue whose pass it cut is remembered (Holds): its next
// pass records the wait in its state.
// A token GitHub refuses (401) is minted again once per sweep, and the
// repository swept again.
func (a *App) Sweep(ctx context.Context, installation int64) error {
	ctx = budget.WithClass(ctx, budget.Background) // leaves the interactive reserve
	log := a.log.With("installation", installation)
	repos, err := a.repositories(ctx, installation)
	reminted := false
	if isUnauthorized(err) {
		if reminted = a.remint(installation, log); reminted {
			repos, err = a.repositories(ctx, installation)
		}
	}
	if err != nil {
		var rl *forge.RateLimitError
		if errors.As(err, &rl) {
			return a.waits(ctx, installation, "", rl, err, log)
		}
		return err
	}
	var errs []error
	for _, repo := range repos {
		err := a.sweepRepo(ctx, installation, repo)
		if errors.Is(err, forge.ErrUnauthorized) && !errors.Is(err, forge.ErrNoInstallation) && !reminted {
			if reminted = a.remint(installation, log); reminted {
				err = a.sweepRepo(ctx, installation, repo)
			}
		}
		if err == nil {
			continue
		}
		err = fmt.Errorf("sweep %s: %w", repo, err)
		var rl *forge.RateLimitError
		if errors.As(err, &rl) {
			held := a.waits(ctx, installation, repo, rl, err, log)
			if len(errs) == 0 {
				return held
			}
			errs = append(errs, err) // a repository failed before: the sweep failed
			break
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			log.Warn("sweep stopped", "repo", repo, "err", err)
			break
		}
	}
	return errors.Join(errs...)
}

// waits logs that the GitHub budget holds installation's sweep (at repo,
// or before any when repo is "") and returns err marked server.ErrHeld:
// background work waits, it is not failed work. The next sweep after the
// until goes on (SWEEP_INTERVAL).
func (a *App) waits(ctx context.Context, installation int64, repo string, rl *forge.RateLimitError, err error, log *slog.Logger) error {
	until, why := a.holdOf(ctx, installation, rl)
	if repo != "" {
		log = log.With("repo", repo)
	}
	log.Warn("sweep waits for the GitHub budget; the next sweep after the until goes on",
		"reason", why.Words(), "until", until.UTC().Format(time.RFC3339), "err", err)
	return fmt.Errorf("%w: %w", server.ErrHeld, err)
}

// sweepRepo reconciles one repository's open autopilot issues.
func (a *App) sweepRepo(ctx context.Context, installation int64, repo string) error {
	log := a.log.With("installation", installation, "repo", repo)
	f, client, err := a.forge(installation, repo)
	if err != nil {
		return err
	}
	rec, err := a.reconciler(f, client, log)
	if err != nil {
		return err
	}
	// The sweep loop is the Action's (reconcile.SweepEach); each issue is
	// reconciled under its lease and read again there (the listing may be
	// stale by the time the lease is held). A rate limit stops the sweep.
	outs, err := rec.SweepEach(ctx, route.Sweeping{Reread: true,
		Run: func(ctx context.Context, number int, t route.Trigger) (route.Outcome, error) {
			var out route.Outcome
			err := server.WithIssueLock(ctx, repo, number, func(ctx context.Context) error {
				var err error
				out, err = rec.Issue(ctx, number, t)
				logOutcomes(log, []route.Outcome{out})
				if err == nil {
					a.passed(ctx, installation, repo, out)
				}
				a.hold(ctx, installation, repo, number, err, log) // the budget cut it
				return err
			})
			return out, err
		},
		Stop: func(err error) bool {
			var rl *forge.RateLimitError
			return errors.As(err, &rl) || ctx.Err() != nil
		}})
	for _, o := range outs {
		if o.Issue == 0 {
			logOutcomes(log, []route.Outcome{o}) // the budget ran low
		}
	}
	return err
}

// repositories lists the installation's repositories
// (GET /installation/repositories, every page), leaving out archived ones,
// where nothing can be written.
func (a *App) repositories(ctx context.Context, installation int64) ([]string, error) {
	c := gogh.NewClient(a.o.Clients.ClientFor(installation))
	base := strings.TrimRight(a.o.BaseURL, "/")
	if base == "" {
		base = "https://api.github.com"
	}
	u, err := url.Parse(base + "/")
	if err != nil {
		return nil, fmt.Errorf("GITHUB_API_URL %q: %w", a.o.BaseURL, err)
	}
	c.BaseURL = u
	opts := &gogh.ListOptions{PerPage: 100}
	var repos []string
	for {
		page, resp, err := c.Apps.ListRepos(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("installation %d: GET /installation/repositories: %w", installation, err)
		}
		for _, r := range page.Repositories {
			if !r.GetArchived() && r.GetFullName() != "" {
				repos = append(repos, r.GetFullName())
			}
		}
		if resp.NextPage == 0 {
			return repos, nil
		}
		opts.Page = resp.NextPage
	}
}

// isUnauthorized reports a go-github error whose answer was 401.
func isUnauthorized(err error) bool {
	var er *gogh.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnauthorized
}
