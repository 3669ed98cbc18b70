// Package prcheck writes the PR check runs (PRODUCT §14) that reconcile
// planned from the engine's checkview.DesiredChecks, and answers a merge
// queue's request for checks. It decides nothing about what a check shows.
package prcheck

import (
	"context"
	"errors"
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Links are where a check run points: the state comment, and the open
// gate's comment when the thread shows it (Gate set).
type Links struct {
	State   string
	Gate    string
	GateSet bool
}

// Create creates check run c. pending reports a failure worth trying
// again later (5xx, timeout, rate limit, a cancelled job); a refusal (a
// workflow without checks: write gets 403) is not.
func Create(ctx context.Context, cw forge.CheckWriter, c checkview.CheckRun, l Links) (pending bool, err error) {
	links := checkview.CheckLinks{State: l.State}
	details := links.State
	if c.Gate != "" && l.GateSet {
		links.Choose, details = l.Gate, l.Gate
	}
	out := forge.CheckRunOut{Name: c.Name, HeadSHA: c.HeadSHA, Status: c.Status, Conclusion: c.Conclusion, ExternalID: c.ExternalID,
		DetailsURL: details, Title: c.Title, Summary: c.Summary(links)}
	for _, a := range c.Actions {
		out.Actions = append(out.Actions, forge.CheckRunAction{Label: a.Label, Description: a.Description, Identifier: a.Identifier})
	}
	if _, err := cw.CreateCheckRun(ctx, out); err != nil {
		var te *forge.TransientError
		var rl *forge.RateLimitError
		return errors.As(err, &te) || errors.As(err, &rl) || ctx.Err() != nil, err
	}
	return false, nil
}

// Record is the state's record of PR pr on head.
func Record(rs []state.PRCheck, pr int, head string) (state.PRCheck, bool) {
	for _, r := range rs {
		if r.PR == pr && r.Head == head {
			return r, true
		}
	}
	return state.PRCheck{}, false
}

// MergeGroup answers a merge queue's request for checks: the queue's
// commit gets a check run named name with the conclusion of the newest one
// on the queued PR's head (success only when that is success), so a
// required check does not stall the queue. Only check runs of app (0:
// GitHub Actions, which creates the Action's) count.
func MergeGroup(ctx context.Context, f forge.Forge, cw forge.CheckWriter, name string, app int64, mg *ghevent.MergeGroup) error {
	pr, err := f.GetPull(ctx, mg.PR)
	if errors.Is(err, forge.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read PR #%d of merge group %s: %w", mg.PR, mg.HeadSHA, err)
	}
	cs, err := f.ListChecks(ctx, pr.HeadSHA)
	if err != nil {
		return fmt.Errorf("checks of PR #%d: %w", mg.PR, err)
	}
	if app == 0 {
		app = actionsAppID
	}
	var last *forge.Check
	for i, c := range cs {
		if c.Name == name && c.AppID == app && (last == nil || c.ID > last.ID) {
			last = &cs[i]
		}
	}
	out := forge.CheckRunOut{Name: name, HeadSHA: mg.HeadSHA, Status: checkview.CheckCompleted, Conclusion: checkview.CheckFailure,
		Title: fmt.Sprintf("PR #%d: no %s check on its head %s", mg.PR, name, short(pr.HeadSHA)), DetailsURL: pr.URL}
	switch {
	case last == nil:
	case last.Status == checkview.CheckCompleted && last.Conclusion == checkview.CheckSuccess:
		out.Conclusion = checkview.CheckSuccess
		out.Title = fmt.Sprintf("PR #%d passed its merge gate on %s", mg.PR, short(pr.HeadSHA))
	default:
		st := last.Status
		if last.Conclusion != "" {
			st = last.Conclusion
		}
		out.Title = fmt.Sprintf("PR #%d: the %s check on its head %s is %s", mg.PR, name, short(pr.HeadSHA), st)
	}
	out.Summary = out.Title + ".\n\nThe merge queue's commit carries the conclusion of the newest `" + name + "` check on the queued PR's head (" + pr.URL + ")."
	if _, err := cw.CreateCheckRun(ctx, out); err != nil {
		return fmt.Errorf("check on merge group %s: %w", mg.HeadSHA, err)
	}
	return nil
}

// actionsAppID is GitHub Actions' App id: GITHUB_TOKEN's check runs carry
// it.
const actionsAppID = 15368

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
