package engine

import (
	"slices"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
)

// PullRead answers QCheckPR: a linked PR as read now, its reviews and,
// when the step waits for checks, the check runs on its head. The engine
// decides what counts: which reviews are evidence of this execution and
// what the checks add up to. A review that counts needs its reviewer's
// permission; the engine asks for the ones Perms lacks (QPerms) and is
// given the read again with them.
type PullRead struct {
	// Pull holds the trusted-PR facts (author permission, approvals).
	Pull *PullFacts
	// URL is the PR's page.
	URL     string
	Reviews []ReviewRead
	// Checks are the check runs and commit statuses on the head (nil
	// when the step does not wait for checks).
	Checks []CheckRead
	// Perms are the reviewers' permissions asked for, by login as given.
	Perms map[string]PermRead
}

// WithPerms adds looked-up permissions (QPerms).
func (e PullRead) WithPerms(perms map[string]PermRead) Event {
	e.Perms = withPerms(e.Perms, perms)
	return e
}

func withPerms(have, add map[string]PermRead) map[string]PermRead {
	out := make(map[string]PermRead, len(have)+len(add))
	for k, v := range have {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

func (m *machine) pullRead(e PullRead) {
	p := e.Pull
	if p == nil {
		return
	}
	ev := evidence.Wanted(m.set.Config, m.s)
	if ev == "" {
		return
	}
	if ev == "review" {
		var missing []string
		for _, r := range e.Reviews {
			if _, ok := e.Perms[r.Reviewer]; evidence.Counts(r, m.s.Exec) && !ok && !slices.Contains(missing, r.Reviewer) {
				missing = append(missing, r.Reviewer)
			}
		}
		if len(missing) > 0 {
			m.ask(Query{Kind: QPerms, Logins: missing, Then: e})
			return
		}
	}
	m.pullSeen(PullSeen{Pull: p})
	switch ev {
	case "review":
		head := &PullFacts{Number: p.Number, Author: p.Author, Fork: p.Fork, HeadSHA: p.HeadSHA, Links: p.Links, Body: p.Body}
		for _, r := range e.Reviews {
			if !evidence.Counts(r, m.s.Exec) {
				continue
			}
			pr := e.Perms[r.Reviewer]
			m.review(Review{ID: r.ID, PR: p.Number, PRAuthor: p.Author, Reviewer: r.Reviewer, Perm: pr.Perm, PermErr: pr.Err,
				State: r.State, Body: r.Body, At: r.At, URL: r.URL, CommitSHA: r.CommitSHA, Pull: head})
		}
	case "checks":
		if c, ok := ChecksSummary(p.Number, p.HeadSHA, e.URL, e.Checks, checkview.CheckName(m.set.Config)); ok {
			c.Pull = p
			m.checks(c)
		}
	}
}

// ChecksSummary adds up the check runs on a PR's head: any failure →
// failure; all completed successfully (success/neutral/skipped) → success;
// otherwise pending (ok false: no evidence yet). The bot's own PR check
// (named own) is no evidence of anything.
func ChecksSummary(pr int, sha, url string, cs []CheckRead, own string) (Checks, bool) {
	cs = slices.DeleteFunc(slices.Clone(cs), func(c CheckRead) bool { return c.Name == own })
	if len(cs) == 0 {
		return Checks{}, false
	}
	ev := Checks{PR: pr, SHA: sha, State: "success", URL: url + "/checks"}
	for _, c := range cs {
		ev.IDs = append(ev.IDs, c.ID)
		switch {
		case c.Status != "completed":
			if ev.State == "success" {
				ev.State = "pending"
			}
		case c.Conclusion == "success" || c.Conclusion == "neutral" || c.Conclusion == "skipped":
		default:
			ev.State = "failure"
			ev.Failed = append(ev.Failed, c.Name)
		}
	}
	return ev, ev.State != "pending"
}
