package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// PullFacts is what the bot read about a linked pull request when it read
// the PR's evidence: the input of the trusted-PR rule (PRODUCT §8).
type PullFacts struct {
	Number int
	Author string
	// AuthorPerm is the author's repository permission; AuthorPermErr: the
	// lookup failed (the author then vouches for nothing).
	AuthorPerm    access.Level
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
	// Body is the PR's description as read now: a link vouched for (see
	// PullEdit) counts only while it is unchanged.
	Body string
}

// PullEdit is what a pull_request opened or edited delivery shows: its
// sender opened the PR or edited it, so when the description changed the
// sender wrote it as delivered (GitHub's REST API does not name who
// edited a description).
type PullEdit struct {
	Sender string
	// Perm is the sender's permission; PermErr: the lookup failed.
	Perm    access.Level
	PermErr bool
	// BodyChanged: the PR was opened, or the edit has changes.body (a
	// title-only edit leaves the description as it was).
	BodyChanged bool
	// Links: the delivered description links this issue.
	Links bool
	// Delivered is the description in the delivery, Now the one read from
	// the API now; when they differ the description changed since.
	Delivered, Now string
}

// bodyHash is the digest a LinkVouch keeps of a PR description.
func bodyHash(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:8])
}

// linkVouch records or drops the vouch of a PR's link: a sender with
// answer_permission who wrote a description linking this issue, still the
// description now, vouches for the PR; any edit by someone without that
// permission (who may have removed and re-added the link), or a
// description that changed since or no longer links, drops the vouch.
func (m *machine) linkVouch(pr int, e *PullEdit) {
	if e == nil {
		return
	}
	permitted := !e.PermErr && e.Perm.AtLeast(m.set.AnswerPermission)
	if permitted && !e.BodyChanged {
		return // a title edit: the description is whoever wrote it before
	}
	i := slices.IndexFunc(m.s.LinkVouches, func(v state.LinkVouch) bool { return v.PR == pr })
	if permitted && e.Links && e.Delivered == e.Now {
		v := state.LinkVouch{PR: pr, By: e.Sender, Body: bodyHash(e.Now)}
		switch {
		case i < 0:
			m.s.LinkVouches = append(m.s.LinkVouches, v)
		case m.s.LinkVouches[i] == v:
			return
		default:
			m.s.LinkVouches[i] = v
		}
		m.changed = true
		return
	}
	if i >= 0 {
		m.s.LinkVouches = slices.Delete(m.s.LinkVouches, i, i+1)
		m.changed = true
	}
}

// linkedBy is who vouched for the PR's link to this issue, while its
// description is the one they wrote ("" when nobody did).
func (m *machine) linkedBy(p *PullFacts) string {
	if m.s == nil {
		return ""
	}
	for _, v := range m.s.LinkVouches {
		if v.PR == p.Number && v.Body == bodyHash(p.Body) {
			return v.By
		}
	}
	return ""
}

// PullApproval is one approving review of a PR, with its reviewer's
// permission.
type PullApproval struct {
	ID        int64
	Reviewer  string
	Perm      access.Level
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
// when its description links this issue and either its head is in this
// repository and its author has at least answer_permission or someone with
// that permission linked it (s's link vouches), or someone else with that
// permission approved its current head (a fork always needs the approval).
// The reason says why a PR is not trusted.
func TrustedPull(set Settings, s *state.State, p *PullFacts) (bool, string) {
	m := &machine{set: set, s: s}
	return m.trustedPull(p)
}

func (m *machine) trustedPull(p *PullFacts) (bool, string) {
	if p == nil {
		return false, "the PR could not be read"
	}
	if !p.Links {
		return false, fmt.Sprintf("#%d no longer links this issue", p.Number)
	}
	if !p.Fork && (!p.AuthorPermErr && p.AuthorPerm.AtLeast(m.set.AnswerPermission) || m.linkedBy(p) != "") {
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
	return false, fmt.Sprintf("#%d is not trusted: %s, nobody with at least %s permission linked it, and nobody else with that permission approved its current head", p.Number, who, m.set.AnswerPermission)
}
