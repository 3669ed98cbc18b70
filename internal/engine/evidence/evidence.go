// Package evidence holds the rules for PR evidence (PRODUCT §8): what the
// bot read about a linked pull request, which PRs are trusted, whose link
// vouches for one, and which reviews count for the current execution. The
// engine applies them to its state; they take every input as data.
package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
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

// PullApproval is one approving review of a PR, with its reviewer's
// permission.
type PullApproval struct {
	ID        int64
	Reviewer  string
	Perm      access.Level
	PermErr   bool
	CommitSHA string
}

// ReviewRead is one review of a PR as listed.
type ReviewRead struct {
	ID                    int64
	Reviewer, State, Body string
	URL, CommitSHA        string
	At                    time.Time
}

// CheckRead is one check run (or commit status) on a PR's head.
type CheckRead struct {
	ID                       int64
	Name, Status, Conclusion string
}

// PermRead is a permission lookup's answer; Err: it failed (fail closed).
type PermRead struct {
	Perm access.Level
	Err  bool
}

// Rule is what the trust rules depend on besides the PR: the minimum
// permission to vouch (answer_permission) and keep_stale_approvals.
type Rule struct {
	Answer    access.Level
	KeepStale bool
}

// Vouch records or drops the vouch of a PR's link in vs and reports
// whether vs changed: a sender with answer_permission who wrote a
// description linking this issue, still the description now, vouches for
// the PR; any edit by someone without that permission (who may have
// removed and re-added the link), or a description that changed since or
// no longer links, drops the vouch.
func (r Rule) Vouch(vs []state.LinkVouch, pr int, e *PullEdit) ([]state.LinkVouch, bool) {
	if e == nil {
		return vs, false
	}
	permitted := !e.PermErr && e.Perm.AtLeast(r.Answer)
	if permitted && !e.BodyChanged {
		return vs, false // a title edit: the description is whoever wrote it before
	}
	i := slices.IndexFunc(vs, func(v state.LinkVouch) bool { return v.PR == pr })
	if permitted && e.Links && e.Delivered == e.Now {
		v := state.LinkVouch{PR: pr, By: e.Sender, Body: bodyHash(e.Now)}
		switch {
		case i < 0:
			vs = append(vs, v)
		case vs[i] == v:
			return vs, false
		default:
			vs[i] = v
		}
		return vs, true
	}
	if i >= 0 {
		return slices.Delete(vs, i, i+1), true
	}
	return vs, false
}

// LinkedBy is who vouched (in vs) for the PR's link to this issue, while
// its description is the one they wrote ("" when nobody did).
func LinkedBy(vs []state.LinkVouch, p *PullFacts) string {
	for _, v := range vs {
		if v.PR == p.Number && v.Body == bodyHash(p.Body) {
			return v.By
		}
	}
	return ""
}

// OnHead reports whether a review given on commit counts for the PR's
// current head: only on that commit, unless keep_stale_approvals is set.
func (r Rule) OnHead(p *PullFacts, commit string) bool {
	return r.KeepStale || commit != "" && commit == p.HeadSHA
}

// vouches reports whether an approval makes the PR trusted: given by
// someone other than its author, with at least answer_permission, on the
// current head.
func (r Rule) vouches(p *PullFacts, a PullApproval) bool {
	return !a.PermErr && a.Perm.AtLeast(r.Answer) && !strings.EqualFold(a.Reviewer, p.Author) && r.OnHead(p, a.CommitSHA)
}

// Trusted is the trusted-PR rule: a PR's checks count as evidence only
// when its description links this issue and either its head is in this
// repository and its author has at least answer_permission or someone with
// that permission linked it (vs, the link vouches), or someone
// else with that permission approved its current head (a fork always
// needs the approval). The reason says why a PR is not trusted.
func (r Rule) Trusted(vs []state.LinkVouch, p *PullFacts) (bool, string) {
	if p == nil {
		return false, "the PR could not be read"
	}
	if !p.Links {
		return false, fmt.Sprintf("#%d no longer links this issue", p.Number)
	}
	if !p.Fork && (!p.AuthorPermErr && p.AuthorPerm.AtLeast(r.Answer) || LinkedBy(vs, p) != "") {
		return true, ""
	}
	for _, a := range p.Approvals {
		if r.vouches(p, a) {
			return true, ""
		}
	}
	who := fmt.Sprintf("its author @%s has less than %s permission", textsafe.Escape(p.Author), r.Answer)
	if p.Fork {
		who = "its head branch is on a fork"
	}
	return false, fmt.Sprintf("#%d is not trusted: %s, nobody with at least %s permission linked it, and nobody else with that permission approved its current head", p.Number, who, r.Answer)
}

// Wanted names what the current step waits for on linked PRs ("review",
// "checks"), "" when it reads none: the caller reads a PR's reviews (and
// checks) only then.
func Wanted(cfg *config.Config, s *state.State) string {
	if s == nil {
		return ""
	}
	f := cfg.All[s.Flow]
	if f == nil {
		return ""
	}
	st, _ := f.StepAt(s.Step)
	if st.Evidence == "review" || st.Evidence == "checks" {
		return st.Evidence
	}
	return ""
}

// Counts reports whether a review is evidence of the execution ex (nil:
// none recorded): an approval or a change request given after it started.
func Counts(r ReviewRead, ex *state.Execution) bool {
	if r.State != "APPROVED" && r.State != "CHANGES_REQUESTED" {
		return false
	}
	return ex == nil || !r.At.Before(ex.StartedAt)
}
