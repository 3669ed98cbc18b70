package engine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// PullFacts is what the bot read about a linked pull request when it read
// the PR's evidence: the input of the trusted-PR rule (PRODUCT §8).
type PullFacts struct {
	Number int
	Author string
	// AuthorPerm is the author's repository permission; AuthorPermErr: the
	// lookup failed (the author then vouches for nothing).
	AuthorPerm    forge.Permission
	AuthorPermErr bool
	// Fork: the head branch is not in this repository (a fork, or a fork
	// since deleted).
	Fork bool
	// HeadSHA is the PR's current head commit.
	HeadSHA string
	// Links: the PR's description still links this issue (Fixes #N,
	// Autopilot-Issue: #N); a PR edited to unlink it is no evidence.
	Links bool
	// Approvals are the PR's approving reviews.
	Approvals []PullApproval
}

// PullApproval is one approving review of a PR, with its reviewer's
// permission.
type PullApproval struct {
	ID        int64
	Reviewer  string
	Perm      forge.Permission
	PermErr   bool
	CommitSHA string
}

// onHead reports whether a review given on commit counts for the PR's
// current head: only on that commit, unless keep_stale_approvals is set.
func (m *machine) onHead(p *PullFacts, commit string) bool {
	return m.set.Config.KeepStaleApprovals || commit != "" && commit == p.HeadSHA
}

// vouches reports whether an approval makes the PR trusted: given by
// someone other than its author, with at least answer_permission, on the
// current head.
func (m *machine) vouches(p *PullFacts, a PullApproval) bool {
	return !a.PermErr && a.Perm.AtLeast(m.set.AnswerPermission) && !strings.EqualFold(a.Reviewer, p.Author) && m.onHead(p, a.CommitSHA)
}

// TrustedPull is the trusted-PR rule: a PR's checks count as evidence only
// when its description links this issue and either its author has at least
// answer_permission and its head is in this repository, or someone else
// with that permission approved its current head (a fork always needs the
// approval). The reason says why a PR is not trusted.
func TrustedPull(set Settings, p *PullFacts) (bool, string) {
	m := &machine{set: set}
	return m.trustedPull(p)
}

func (m *machine) trustedPull(p *PullFacts) (bool, string) {
	if p == nil {
		return false, "the PR could not be read"
	}
	if !p.Links {
		return false, fmt.Sprintf("#%d no longer links this issue", p.Number)
	}
	if !p.Fork && !p.AuthorPermErr && p.AuthorPerm.AtLeast(m.set.AnswerPermission) {
		return true, ""
	}
	for _, a := range p.Approvals {
		if m.vouches(p, a) {
			return true, ""
		}
	}
	who := fmt.Sprintf("its author @%s has less than %s permission", textsafe.Escape(p.Author), m.set.AnswerPermission)
	if p.Fork {
		who = "its head branch is on a fork"
	}
	return false, fmt.Sprintf("#%d is not trusted: %s and nobody else with at least %s permission approved its current head", p.Number, who, m.set.AnswerPermission)
}
