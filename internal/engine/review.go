package engine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// consensus handles /autopilot approve|reject <role>.
func (m *inputs) consensus(c events.Comment, r grammar.Result, accept func(), refuse func(string, string)) {
	st := m.Step()
	role := strings.ToLower(r.Name)
	if !st.Consensus || m.S.Review == nil || m.S.Status != state.InProgress {
		refuse("no-consensus-gate", "approvals count only while the plan waits for consensus.")
		return
	}
	if role != "architect" && role != "critic" {
		refuse("bad-role", "the roles are `architect` and `critic`.")
		return
	}
	if !m.Set.Config.HasRole(role, c.Author) {
		refuse("not-in-role", fmt.Sprintf("only people listed under roles.%s in .github/autopilot.yml can give that approval.", role))
		return
	}
	if r.Cmd == "reject" {
		accept()
		m.S.Review.Architect, m.S.Review.Critic = nil, nil
		m.S.Review.ReturnToPlanReason = prose.OneLine(r.Text, 300)
		m.S.SubStep = state.SubStep{Phase: 2, Name: "plan-rejected", Detail: prose.OneLine(role+": "+r.Text, 120)}
		m.Post("announce", fmt.Sprintf("The %s rejected the plan: %s\nRevise the plan and report it again with `/autopilot done`.", role, textsafe.Escape(prose.OneLine(r.Text, 300))))
		return
	}
	if !m.AwaitingConsensus() {
		refuse("no-plan", "there is no plan report awaiting approval; approvals must follow the plan (`/autopilot done <plan summary>` first).")
		return
	}
	if role == "critic" && m.S.Review.Architect == nil {
		refuse("out-of-order", "the architect approves first, then the critic. This critic approval was not recorded.")
		return
	}
	if role == "architect" && m.S.Review.Architect != nil {
		refuse("duplicate", "the architect approval is already recorded.")
		return
	}
	if role == "critic" && strings.EqualFold(m.S.Review.Architect.By, c.Author) {
		refuse("same-reviewer", "the critic must be someone other than the architect who approved this plan.")
		return
	}
	accept()
	m.Approve(role, c.Author, c.URL, r.Text)
}

// review handles a PR review on a linked PR.
func (m *inputs) review(e events.Review) {
	if e.PermErr {
		return
	}
	if m.S.Run != state.RunInProgress || m.S.Status != state.InProgress {
		m.reReview(e)
		return
	}
	st := m.Step()
	if ex := m.S.Exec; ex != nil && !e.At.IsZero() && before(e.At, ex.StartedAt) {
		return // evidence from before this execution (an earlier cycle) does not count
	}
	authorised := e.Perm.AtLeast(m.Set.AnswerPermission) && !strings.EqualFold(e.Reviewer, e.PRAuthor)
	if st.Consensus && e.State == "APPROVED" && authorised && m.S.Review != nil && m.AwaitingConsensus() {
		switch {
		case m.S.Review.Architect == nil && m.Set.Config.HasRole("architect", e.Reviewer):
			m.Approve("architect", e.Reviewer, e.URL, "approving review")
		case m.S.Review.Architect != nil && m.Set.Config.HasRole("critic", e.Reviewer) && !strings.EqualFold(m.S.Review.Architect.By, e.Reviewer):
			m.Approve("critic", e.Reviewer, e.URL, "approving review")
		}
		return
	}
	if st.Evidence != "review" {
		m.reReview(e)
		return
	}
	if e.Pull == nil || !e.Pull.Links {
		return // a PR not read, or edited so it no longer links this issue
	}
	switch e.State {
	case "APPROVED":
		if !authorised {
			if strings.EqualFold(e.Reviewer, e.PRAuthor) {
				m.Note("review-self-"+fmt.Sprint(e.ID), fmt.Sprintf("The approval by @\u200b%s on #\u200b%d was not counted as evidence: the PR's author cannot approve their own work.", textsafe.Escape(e.Reviewer), e.PR))
			}
			return
		}
		if !m.rule().OnHead(e.Pull, e.CommitSHA) {
			// A push after the approval: the approved code is not the code
			// under review (GitHub's "dismiss stale approvals").
			m.staleApproval(e)
			return
		}
		v := &state.Verdict{Clean: true, Evidence: e.URL, Reason: "approved by @" + e.Reviewer}
		if m.S.Review != nil {
			m.S.Review.ReviewVerdict = v
		}
		m.Handoff(st.Slug, "approved by @"+e.Reviewer, e.URL)
		m.evidenceRef(st.Slug, e.PR, e.Pull.HeadSHA, e.ID, nil)
		m.Complete("clean review: approved by @" + e.Reviewer + " (" + e.URL + ")")
	case "CHANGES_REQUESTED":
		if !e.Perm.AtLeast(m.Set.AnswerPermission) {
			return
		}
		m.NotClean("review", "changes requested by @"+e.Reviewer+": "+prose.FirstLine(e.Body), e.URL)
	}
}

// reReview applies an approval that arrives after the review step passed
// (during QA, at a gate after it, or once the run ended): the review
// verdict rests on one approval at one head, and a push after it leaves the
// new head unreviewed (PRODUCT §14). An approval of the PR's current head
// by someone who may give it becomes the verdict's evidence, so the check
// on that head can pass the merge gate; an approval of an older head is
// said once and changes nothing. Nothing else of the flow moves.
func (m *inputs) reReview(e events.Review) {
	rl := m.S.Review
	if e.State != "APPROVED" || rl == nil || rl.ReviewVerdict == nil || !rl.ReviewVerdict.Clean || m.rule().KeepStale {
		return
	}
	switch m.S.Run {
	case state.RunInProgress, state.RunAwaitingDecision, state.RunDone:
	default:
		return
	}
	slug, h, ok := m.verdictHandoff()
	if !ok || h.PR != e.PR || h.Review == e.ID || e.Pull == nil || !e.Pull.Links || h.HeadSHA == e.Pull.HeadSHA {
		return // the verdict already rests on the current head (or on another PR)
	}
	if !e.Perm.AtLeast(m.Set.AnswerPermission) || strings.EqualFold(e.Reviewer, e.PRAuthor) {
		return
	}
	if !m.rule().OnHead(e.Pull, e.CommitSHA) {
		m.staleApproval(e)
		return
	}
	rl.ReviewVerdict = &state.Verdict{Clean: true, Evidence: e.URL, Reason: "approved by @" + e.Reviewer + " on " + prose.Short(e.Pull.HeadSHA)}
	m.Handoff(slug, "approved by @"+e.Reviewer+" on "+prose.Short(e.Pull.HeadSHA)+" after a push", e.URL)
	m.evidenceRef(slug, e.PR, e.Pull.HeadSHA, e.ID, nil)
}

// staleApproval says once that an approval of an earlier head was not
// counted.
func (m *inputs) staleApproval(e events.Review) {
	m.Note("review-stale-"+fmt.Sprint(e.ID), fmt.Sprintf("The approval by @\u200b%s on #\u200b%d was given on commit %s, but the PR's head is now %s, so it was not counted as evidence. Approve the current head.",
		textsafe.Escape(e.Reviewer), e.PR, prose.Short(e.CommitSHA), prose.Short(e.Pull.HeadSHA)))
}

// verdictHandoff is the handoff the review verdict rests on
// (checkview.VerdictHandoff) with its step, while that step stays passed
// in this cycle (a return to the plan starts it again).
func (m *inputs) verdictHandoff() (string, state.Handoff, bool) {
	slug, h, ok := checkview.VerdictHandoff(m.S.Review)
	if !ok {
		return "", h, false
	}
	for _, p := range m.S.Steps {
		if p.Slug == slug && p.Status == state.Completed {
			return slug, h, true
		}
	}
	return "", h, false
}

// evidenceRef records in a phase's handoff the PR, head commit and review
// or checks its verdict rests on.
func (m *inputs) evidenceRef(slug string, pr int, sha string, review int64, checks []int64) {
	if m.S.Review == nil {
		return
	}
	h, ok := m.S.Review.Handoffs[slug]
	if !ok {
		return
	}
	h.PR, h.HeadSHA, h.Review, h.Checks = pr, sha, review, append([]int64(nil), checks...)
	m.S.Review.Handoffs[slug] = h
}

// checks handles the check state of a linked PR's head.
func (m *inputs) checks(e events.Checks) {
	if m.S.Run != state.RunInProgress || m.S.Status != state.InProgress {
		return
	}
	st := m.Step()
	if st.Evidence != "checks" {
		return
	}
	// Checks count only on a trusted PR's current head: anyone can open a
	// PR whose own workflows report green (or red).
	if ok, _ := m.trustedPull(e.Pull); !ok || e.SHA == "" || e.SHA != e.Pull.HeadSHA {
		return
	}
	switch e.State {
	case "success":
		if m.S.Review != nil {
			m.S.Review.QAVerdict = &state.Verdict{Clean: true, Evidence: e.URL, Reason: "all checks green on " + prose.Short(e.SHA)}
		}
		m.Handoff(st.Slug, "all checks green on "+prose.Short(e.SHA), e.URL)
		m.evidenceRef(st.Slug, e.PR, e.SHA, 0, e.IDs)
		m.Complete("clean QA: all checks green on " + prose.Short(e.SHA))
	case "failure":
		m.NotClean("qa", "checks failed on "+prose.Short(e.SHA)+": "+strings.Join(e.Failed, ", "), e.URL)
	}
}
