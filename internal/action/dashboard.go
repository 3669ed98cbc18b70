package action

import (
	"context"
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/engine/dashissue"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/repofiles"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// dashboardAPI is what keeping the dashboard issue needs of the GitHub
// adapter, beyond reading the configuration.
type dashboardAPI interface {
	forge.Forge
	ListLabeled(ctx context.Context, label string, since time.Time) ([]tracker.GHIssue, error)
	CreateIssue(ctx context.Context, title, body string, labels []string) (tracker.GHIssue, error)
	EditIssueBody(ctx context.Context, n int, body string) error
	CloseIssue(ctx context.Context, n int) error
	PinIssue(ctx context.Context, nodeID string) error
}

// keepDashboard runs after a sweep that reconciled every open autopilot
// issue: with dashboard: true it makes the repository's one dashboard
// issue show their rows (engine/dashissue decides the writes: none when
// nothing changed). It returns what it did, in words, for the run's log
// ("" when the dashboard is off), and a warning when the issue was kept
// but a step of it was refused (the pin after creating it).
func keepDashboard(ctx context.Context, api dashboardAPI, configPath string, bot dashissue.Bot, outs []route.Outcome) (note, warning string, err error) {
	cfg, err := repofiles.ReadConfig(ctx, api, configPath)
	if err != nil {
		return "", "", err
	}
	if !cfg.Config.Dashboard {
		return "", "", nil
	}
	var rows []model.Row
	for _, o := range outs {
		if o.Issue == 0 {
			// The sweep stopped early (low API budget): the rows would be
			// partial, so the dashboard stays as it was.
			return "the sweep stopped early; the dashboard issue is left as it was", "", nil
		}
		if r, ok := model.Build(model.Pass{Repo: api.Repo(), Issue: o.Issue, State: o.State, Listed: o.Listed, URL: o.URL}); ok {
			rows = append(rows, r)
		}
	}
	body := dashissue.Render(rows)
	cands, err := listDashboards(ctx, api)
	if err != nil {
		return "", "", err
	}
	plan := dashissue.Decide(cands, bot, body)
	for _, n := range plan.Close {
		if err := api.CloseIssue(ctx, n); err != nil {
			return "", "", fmt.Errorf("dashboard: close the duplicate #%d: %w", n, err)
		}
	}
	switch {
	case plan.Create:
		is, err := api.CreateIssue(ctx, dashissue.Title, body, []string{dashissue.Label})
		if err != nil {
			return "", "", fmt.Errorf("dashboard: create the issue: %w", err)
		}
		if is.Number == 0 {
			return "dry-run: would create the dashboard issue", "", nil
		}
		// Listed again: a sweep running at the same time may have created
		// one too; the newer closes itself.
		if cands, err = listDashboards(ctx, api); err != nil {
			return "", "", err
		}
		if dashissue.AfterCreate(cands, bot, is.Number) {
			if err := api.CloseIssue(ctx, is.Number); err != nil {
				return "", "", fmt.Errorf("dashboard: close #%d, created at the same time as another: %w", is.Number, err)
			}
			return fmt.Sprintf("dashboard issue #%d closed: another sweep created one first", is.Number), "", nil
		}
		note = fmt.Sprintf("dashboard issue #%d created with %d row(s)", is.Number, len(rows))
		if plan.Pin {
			// One call, right after the create; a refusal is not tried
			// again (later sweeps plan no pin).
			if err := api.PinIssue(ctx, is.NodeID); err != nil {
				return note, fmt.Sprintf("dashboard issue #%d created but not pinned: %v. "+
					"A repository holds at most 3 pinned issues and pinning needs write access (the workflow's "+
					"permissions: issues: write): unpin one and use \"Pin issue\" in #%d's sidebar; autopilot does not try again.",
					is.Number, err, is.Number), nil
			}
			note += ", pinned"
		}
		return note, "", nil
	case plan.Edit != 0:
		if err := api.EditIssueBody(ctx, plan.Edit, body); err != nil {
			return "", "", fmt.Errorf("dashboard: edit #%d: %w", plan.Edit, err)
		}
		return fmt.Sprintf("dashboard issue #%d updated: %d row(s)", plan.Edit, len(rows)), "", nil
	}
	return fmt.Sprintf("dashboard issue #%d unchanged", plan.Keep), "", nil
}

// listDashboards lists the open issues carrying the dashboard's label.
func listDashboards(ctx context.Context, api dashboardAPI) ([]dashissue.Candidate, error) {
	list, err := api.ListLabeled(ctx, dashissue.Label, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("dashboard: list issues labelled %s: %w", dashissue.Label, err)
	}
	var out []dashissue.Candidate
	for _, is := range list {
		if !is.Closed {
			out = append(out, dashissue.Candidate{Number: is.Number, Body: is.Body, Author: is.Author, AuthorIsBot: is.AuthorIsBot, AppID: is.AppID})
		}
	}
	return out, nil
}
