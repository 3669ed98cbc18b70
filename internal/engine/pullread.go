package engine

import (
	"slices"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
)

func (m *inputs) pullRead(e events.PullRead) {
	p := e.Pull
	if p == nil {
		return
	}
	ev := evidence.Wanted(m.Set.Config, m.S)
	if ev == "" {
		return
	}
	if ev == "review" {
		var missing []string
		for _, r := range e.Reviews {
			if _, ok := e.Perms[r.Reviewer]; evidence.Counts(r, m.S.Exec) && !ok && !slices.Contains(missing, r.Reviewer) {
				missing = append(missing, r.Reviewer)
			}
		}
		if len(missing) > 0 {
			m.Ask(events.Query{Kind: events.QPerms, Logins: missing, Then: e})
			return
		}
	}
	m.pullSeen(events.PullSeen{Pull: p})
	switch ev {
	case "review":
		head := &evidence.PullFacts{Number: p.Number, Author: p.Author, Fork: p.Fork, HeadSHA: p.HeadSHA, Links: p.Links, Body: p.Body}
		for _, r := range e.Reviews {
			if !evidence.Counts(r, m.S.Exec) {
				continue
			}
			pr := e.Perms[r.Reviewer]
			m.review(events.Review{ID: r.ID, PR: p.Number, PRAuthor: p.Author, Reviewer: r.Reviewer, Perm: pr.Perm, PermErr: pr.Err,
				State: r.State, Body: r.Body, At: r.At, URL: r.URL, CommitSHA: r.CommitSHA, Pull: head})
		}
	case "checks":
		if c, ok := checkview.ChecksSummary(p.Number, p.HeadSHA, e.URL, e.Checks, checkview.CheckName(m.Set.Config)); ok {
			c.Pull = p
			m.checks(c)
		}
	}
}
