package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/approvals"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// ApproverReader is what a forge offers, beyond forge.Forge, to read the
// facts of approver policies. A forge without it fails closed: no team
// member counts and no code owner is known.
type ApproverReader interface {
	// TeamMembership is login's membership of team slug in org:
	// "active", "pending", "none" (not a member), or "unreadable" when the
	// token cannot read the team (a secret team it cannot see, or no
	// Members: read permission).
	TeamMembership(ctx context.Context, org, slug, login string) (string, error)
	// PullFiles are the files pull request n changes.
	PullFiles(ctx context.Context, n int) ([]string, error)
	// HeadPusher is the account that pushed commit sha (its committer, or
	// its author for a commit GitHub made on the web).
	HeadPusher(ctx context.Context, sha string) (string, error)
	// ReadFileAt reads a file at ref; found is false when it is not there.
	ReadFileAt(ctx context.Context, path, ref string) (data []byte, found bool, err error)
}

// codeOwnersPaths are where GitHub looks for CODEOWNERS, in its order.
var codeOwnersPaths = []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"}

// approvers answers a QApprovers query: it reads the authors, the pusher,
// CODEOWNERS and the team memberships the engine needs to judge a vote,
// and gives the vote again with them. The engine decides what counts.
func (ru *run) approvers(ask *events.ApproversAsk) error {
	if ask == nil {
		return nil
	}
	f := ru.r.o.Forge
	reader, _ := f.(ApproverReader)
	facts := approvals.Facts{Teams: map[string]map[string]approvals.Membership{}, OwnedPaths: map[string]string{}}
	if ld := ru.loaded; ld != nil && ld.Issue.Author.Login != "" {
		facts.IssueAuthor = ld.Issue.Author.Login // read with the thread
	} else {
		is, err := f.GetIssue(ru.ctx, ru.number)
		if err != nil {
			return fmt.Errorf("approvers: read issue #%d: %w", ru.number, err)
		}
		facts.IssueAuthor = is.Author.Login
	}
	teams := append([]string(nil), ask.Teams...)
	base := ""
	if ask.PR != 0 {
		pr, err := ru.getPull(ask.PR)
		switch {
		case errors.Is(err, forge.ErrNotFound):
		case err != nil:
			return fmt.Errorf("approvers: read PR #%d: %w", ask.PR, err)
		default:
			facts.PR, facts.PRAuthor, base = pr.Number, pr.Author.Login, pr.BaseRef
			if reader != nil {
				if facts.Pusher, err = reader.HeadPusher(ru.ctx, pr.HeadSHA); err != nil {
					return fmt.Errorf("approvers: pusher of PR #%d: %w", ask.PR, err)
				}
			}
		}
	}
	if ask.CodeOwners && facts.PR != 0 && reader != nil {
		if err := ru.codeOwners(reader, facts.PR, base, &facts); err != nil {
			return err
		}
		for _, o := range facts.CodeOwners {
			if strings.Contains(o, "/") {
				teams = append(teams, o)
			}
		}
	}
	for _, login := range ask.Logins {
		facts.Teams[login] = map[string]approvals.Membership{}
		for _, t := range teams {
			m := approvals.Unreadable
			if reader != nil {
				org, slug, _ := strings.Cut(strings.TrimPrefix(t, "@"), "/")
				got, err := reader.TeamMembership(ru.ctx, org, slug, login)
				if err != nil {
					return fmt.Errorf("approvers: membership of %s in %s: %w", login, t, err)
				}
				m = approvals.Membership(got)
			}
			facts.Teams[login][t] = m
		}
	}
	return ru.apply(ask.Answer(facts))
}

// codeOwners reads CODEOWNERS at the PR's base (GitHub's locations, in
// its order) and the PR's changed files, and puts their owners in facts.
func (ru *run) codeOwners(reader ApproverReader, pr int, base string, facts *approvals.Facts) error {
	var text []byte
	for _, p := range codeOwnersPaths {
		data, found, err := reader.ReadFileAt(ru.ctx, p, base)
		if err != nil {
			return fmt.Errorf("approvers: read %s at %q: %w", p, base, err)
		}
		if found {
			text = data
			break
		}
	}
	if text == nil {
		return nil
	}
	files, err := reader.PullFiles(ru.ctx, pr)
	if err != nil {
		return fmt.Errorf("approvers: files of PR #%d: %w", pr, err)
	}
	facts.CodeOwners, facts.OwnedPaths = approvals.ParseCodeOwners(string(text)).OwnersOf(files)
	return nil
}
