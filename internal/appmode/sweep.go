package appmode

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	gogh "github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

// Sweep implements server.Sweeper: it lists the installation's
// repositories and reconciles, one issue at a time under that issue's
// lease, every open issue carrying the trigger label (starting a run where
// none exists) and every active run whose trigger label is gone. It catches up
// missed deliveries and fires executor timeouts and wall-clock limits. A
// repository that fails is reported and the others are still swept; a
// rate limit stops the whole sweep (the next one continues). A token GitHub
// refuses (401) is minted again once per sweep, and the repository swept again.
func (a *App) Sweep(ctx context.Context, installation int64) error {
	log := a.log.With("installation", installation)
	repos, err := a.repositories(ctx, installation)
	reminted := false
	if isUnauthorized(err) {
		if reminted = a.remint(installation, log); reminted {
			repos, err = a.repositories(ctx, installation)
		}
	}
	if err != nil {
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
		errs = append(errs, fmt.Errorf("sweep %s: %w", repo, err))
		var rl *forge.RateLimitError
		if errors.As(err, &rl) || ctx.Err() != nil {
			log.Warn("sweep stopped", "repo", repo, "err", err)
			break
		}
	}
	return errors.Join(errs...)
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
	// Labelled issues (a run is started where a labeled delivery was lost)
	// and active runs whose trigger label is gone (stopped).
	list, err := rec.SweepTargets(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for i, st := range list {
		if wiring.BudgetLow(client) {
			log.Warn("sweep stopped early: API budget low", "left", len(list)-i, "of", len(list))
			break
		}
		// The listing may be stale by the time the lease is held, so the
		// issue is read again under it (the target's trigger has no snapshot).
		err := server.WithIssueLock(ctx, repo, st.Number, func(ctx context.Context) error {
			out, err := rec.Issue(ctx, st.Number, st.Trigger)
			logOutcomes(log, []reconcile.Outcome{out})
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("#%d: %w", st.Number, err))
			var rl *forge.RateLimitError
			if errors.As(err, &rl) || ctx.Err() != nil {
				break
			}
		}
	}
	return errors.Join(errs...)
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
