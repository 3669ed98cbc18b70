// Package prcheck carries reconcile's side of linked PRs: it gathers the
// facts the engine's trusted-PR and evidence rules need (head, fork,
// link, permissions, reviews, checks), writes the PR check runs (PRODUCT
// §14) that reconcile planned from the engine's checkview.DesiredChecks,
// and answers a merge queue's request for checks. It decides nothing: the
// engine decides which reviews count (engine.Approves), whether a failed
// write stays pending (engine.CheckWritten) and what a merge queue's
// commit shows (checkview.MergeQueue).
package prcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile/dispatch"
)

// Links are where a check run points: the state comment, and the open
// gate's comment when the thread shows it (Gate set).
type Links struct {
	State   string
	Gate    string
	GateSet bool
}

// Create creates check run c and returns the class of its failure
// (engine.ErrNone when written): 5xx, timeout and a cancelled job are
// transient, a rate limit its own class, anything else (a workflow
// without checks: write gets 403) refused.
func Create(ctx context.Context, cw forge.CheckWriter, c checkview.CheckRun, l Links) (engine.ErrClass, error) {
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
	_, err := cw.CreateCheckRun(ctx, out)
	return classify(ctx, err), err
}

// classify maps a forge error to its class (dispatch.Classify); a
// cancelled context makes any failure transient.
func classify(ctx context.Context, err error) engine.ErrClass {
	if err != nil && ctx.Err() != nil {
		return engine.ErrTransient
	}
	return dispatch.Classify(err)
}

// MergeGroup answers a merge queue's request for checks: it reads the
// queued PR and the check runs on its head, and writes on the queue's
// commit the check the engine decides (checkview.MergeQueue.Check) under
// name; only check runs of app (0: GitHub Actions) count.
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
	seen := make([]checkview.SeenCheck, len(cs))
	for i, c := range cs {
		seen[i] = checkview.SeenCheck{ID: c.ID, Name: c.Name, AppID: c.AppID, Status: c.Status, Conclusion: c.Conclusion}
	}
	q := checkview.MergeQueue{Name: name, App: app, PR: mg.PR, PRURL: pr.URL, PRHead: pr.HeadSHA, QueueHead: mg.HeadSHA}.Check(seen)
	out := forge.CheckRunOut{Name: q.Name, HeadSHA: q.HeadSHA, ExternalID: q.ExternalID, Status: q.Status, Conclusion: q.Conclusion,
		Title: q.Title, Summary: q.Summary, DetailsURL: q.DetailsURL}
	if _, err := cw.CreateCheckRun(ctx, out); err != nil {
		return fmt.Errorf("check on merge group %s: %w", mg.HeadSHA, err)
	}
	return nil
}

// Perm looks up a login's permission; an error fails closed (the engine
// is told the lookup failed).
type Perm func(login string) (access.Level, error)

// Facts gathers what the trusted-PR rule needs about PR pr linked to issue
// in repo (the engine decides): its author's permission, whether its head
// is a fork, whether its description still links the issue, and its
// approving reviews with their reviewers' permissions.
func Facts(pr forge.Pull, reviews []forge.Review, repo string, issue int, perm Perm) *evidence.PullFacts {
	f := Head(pr, repo, issue)
	var err error
	f.AuthorPerm, err = perm(pr.Author.Login)
	f.AuthorPermErr = err != nil
	for _, rv := range reviews {
		if !engine.Approves(rv.State) {
			continue
		}
		p, err := perm(rv.Reviewer.Login)
		f.Approvals = append(f.Approvals, evidence.PullApproval{ID: rv.ID, Reviewer: rv.Reviewer.Login, Perm: p, PermErr: err != nil, CommitSHA: rv.CommitSHA})
	}
	return f
}

// Head is what a review needs to know about its PR: the current head,
// whether it is a fork's, and whether the description still links issue
// (no permission lookups).
func Head(pr forge.Pull, repo string, issue int) *evidence.PullFacts {
	return &evidence.PullFacts{Number: pr.Number, Author: pr.Author.Login, Fork: engine.ForkHead(pr.HeadRepo, repo),
		HeadSHA: pr.HeadSHA, Links: slices.Contains(ghevent.LinkedIssues(pr.Body), issue), Body: pr.Body}
}

// Read is a PR read as evidence for the engine, with its reviews and, for
// a checks step (withChecks), its check runs.
func Read(pr forge.Pull, facts *evidence.PullFacts, reviews []forge.Review, checks []forge.Check, withChecks bool) events.PullRead {
	read := events.PullRead{Pull: facts, URL: pr.URL}
	for _, rv := range reviews {
		read.Reviews = append(read.Reviews, evidence.ReviewRead{ID: rv.ID, Reviewer: rv.Reviewer.Login, State: rv.State, Body: rv.Body,
			URL: rv.URL, CommitSHA: rv.CommitSHA, At: rv.SubmittedAt})
	}
	if withChecks {
		read.Checks = []evidence.CheckRead{}
		for _, c := range checks {
			read.Checks = append(read.Checks, evidence.CheckRead{ID: c.ID, Name: c.Name, Status: c.Status, Conclusion: c.Conclusion})
		}
	}
	return read
}
