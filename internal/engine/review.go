package engine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/reply"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

func (m *machine) evidenceNeeded(kind string) string {
	if kind == "review" {
		return fmt.Sprintf("**%s** is clean only on evidence: an approving review of the linked PR by someone other than its author with at least %s permission. A reported \"done\" is not enough.", m.s.Name, m.set.AnswerPermission)
	}
	return fmt.Sprintf("**%s** is clean only on evidence: all checks green on the linked PR's head. A reported \"done\" is not enough; `/autopilot skip <reason>` records a reasoned skip.", m.s.Name)
}

// evidenceWanted tells the announcement of an evidence step what completes it.
func (m *machine) evidenceWanted(st flow.Step) string {
	back := ""
	if st.ReturnTo != "" && m.f.Index(st.ReturnTo) >= 0 {
		back = " A verdict that is not clean returns to " + m.f.Steps[m.f.Index(st.ReturnTo)].Name + "."
	}
	if st.Evidence == "review" {
		return fmt.Sprintf("waiting for an approving review of the linked PR by someone other than its author (at least %s permission).%s", m.set.AnswerPermission, back)
	}
	return "waiting for every check on the linked PR's head to pass (read when the step starts, on each push and on the scheduled sweep); `/autopilot skip <reason>` records a reasoned skip." + back
}

// handoff records a phase's handoff with the links it rests on.
func (m *machine) handoff(slug, summary string, links ...string) {
	if m.s.Review == nil {
		return
	}
	if m.s.Review.Handoffs == nil {
		m.s.Review.Handoffs = map[string]state.Handoff{}
	}
	ls := []string{}
	for _, l := range links {
		if l != "" {
			ls = append(ls, l)
		}
	}
	if m.s.Review.Snapshot != "" {
		ls = append(ls, "snapshot:"+m.s.Review.Snapshot)
	}
	m.s.Review.Handoffs[slug] = state.Handoff{Summary: prose.OneLine(summary, 300), Links: ls, At: m.now}
	m.changed = true
}

// planReported: a plan report is not consensus; approvals must follow it.
func (m *machine) planReported() {
	rl := m.s.Review
	rl.Architect, rl.Critic = nil, nil
	m.s.SubStep = state.SubStep{Phase: 1, Name: subArchitect, Detail: "plan reported; needs architect then critic approval"}
	m.changed = true
	m.post("announce", "Plan recorded. It needs consensus before execution: an **architect** approval, then a **critic** approval (`/autopilot approve architect|critic [note]`, or an approving review on the linked PR by someone holding the role).")
}

// consensus handles /autopilot approve|reject <role>.
func (m *machine) consensus(c Comment, r reply.Result, accept func(), refuse func(string, string)) {
	st := m.step()
	role := strings.ToLower(r.Name)
	if !st.Consensus || m.s.Review == nil || m.s.Status != state.InProgress {
		refuse("no-consensus-gate", "approvals count only while the plan waits for consensus.")
		return
	}
	if role != "architect" && role != "critic" {
		refuse("bad-role", "the roles are `architect` and `critic`.")
		return
	}
	if !m.set.Config.HasRole(role, c.Author) {
		refuse("not-in-role", fmt.Sprintf("only people listed under roles.%s in .github/autopilot.yml can give that approval.", role))
		return
	}
	if r.Cmd == "reject" {
		accept()
		m.s.Review.Architect, m.s.Review.Critic = nil, nil
		m.s.Review.ReturnToPlanReason = prose.OneLine(r.Text, 300)
		m.s.SubStep = state.SubStep{Phase: 2, Name: "plan-rejected", Detail: prose.OneLine(role+": "+r.Text, 120)}
		m.post("announce", fmt.Sprintf("The %s rejected the plan: %s\nRevise the plan and report it again with `/autopilot done`.", role, textsafe.Escape(prose.OneLine(r.Text, 300))))
		return
	}
	if !m.awaitingConsensus() {
		refuse("no-plan", "there is no plan report awaiting approval; approvals must follow the plan (`/autopilot done <plan summary>` first).")
		return
	}
	if role == "critic" && m.s.Review.Architect == nil {
		refuse("out-of-order", "the architect approves first, then the critic. This critic approval was not recorded.")
		return
	}
	if role == "architect" && m.s.Review.Architect != nil {
		refuse("duplicate", "the architect approval is already recorded.")
		return
	}
	if role == "critic" && strings.EqualFold(m.s.Review.Architect.By, c.Author) {
		refuse("same-reviewer", "the critic must be someone other than the architect who approved this plan.")
		return
	}
	accept()
	m.approve(role, c.Author, c.URL, r.Text)
}

// awaitingConsensus reports whether a plan report waits for its approvals
// (a rejection needs a new report before approvals count again).
func (m *machine) awaitingConsensus() bool {
	n := m.s.SubStep.Name
	return n == subArchitect || n == subCritic
}

// Sub-steps of the consensus gate.
const (
	subArchitect = "awaiting-architect-review"
	subCritic    = "awaiting-critic-review"
)

func (m *machine) approve(role, by, link, note string) {
	a := &state.Approval{By: by, At: m.now, Link: link, Note: prose.OneLine(note, 200)}
	if role == "architect" {
		m.s.Review.Architect = a
		m.s.SubStep = state.SubStep{Phase: 2, Name: subCritic, Detail: "architect approved"}
		m.changed = true
		return
	}
	m.s.Review.Critic = a
	m.s.Review.ReturnToPlanReason = ""
	m.handoff("plan-consensus", "architect @"+m.s.Review.Architect.By+" then critic @"+by+" approved", m.s.Review.Architect.Link, link)
	m.complete("consensus: architect @" + m.s.Review.Architect.By + ", critic @" + by)
}

// review handles a PR review on a linked PR.
func (m *machine) review(e Review) {
	if m.s.Run != state.RunInProgress || m.s.Status != state.InProgress {
		return
	}
	st := m.step()
	if e.PermErr {
		return
	}
	if ex := m.s.Exec; ex != nil && !e.At.IsZero() && before(e.At, ex.StartedAt) {
		return // evidence from before this execution (an earlier cycle) does not count
	}
	authorised := e.Perm.AtLeast(m.set.AnswerPermission) && !strings.EqualFold(e.Reviewer, e.PRAuthor)
	if st.Consensus && e.State == "APPROVED" && authorised && m.s.Review != nil && m.awaitingConsensus() {
		switch {
		case m.s.Review.Architect == nil && m.set.Config.HasRole("architect", e.Reviewer):
			m.approve("architect", e.Reviewer, e.URL, "approving review")
		case m.s.Review.Architect != nil && m.set.Config.HasRole("critic", e.Reviewer) && !strings.EqualFold(m.s.Review.Architect.By, e.Reviewer):
			m.approve("critic", e.Reviewer, e.URL, "approving review")
		}
		return
	}
	if st.Evidence != "review" {
		return
	}
	if e.Pull == nil || !e.Pull.Links {
		return // a PR not read, or edited so it no longer links this issue
	}
	switch e.State {
	case "APPROVED":
		if !authorised {
			if strings.EqualFold(e.Reviewer, e.PRAuthor) {
				m.note("review-self-"+fmt.Sprint(e.ID), fmt.Sprintf("The approval by @\u200b%s on #\u200b%d was not counted as evidence: the PR's author cannot approve their own work.", textsafe.Escape(e.Reviewer), e.PR))
			}
			return
		}
		if !m.rule().OnHead(e.Pull, e.CommitSHA) {
			// A push after the approval: the approved code is not the code
			// under review (GitHub's "dismiss stale approvals").
			m.note("review-stale-"+fmt.Sprint(e.ID), fmt.Sprintf("The approval by @\u200b%s on #\u200b%d was given on commit %s, but the PR's head is now %s, so it was not counted as evidence. Approve the current head.",
				textsafe.Escape(e.Reviewer), e.PR, prose.Short(e.CommitSHA), prose.Short(e.Pull.HeadSHA)))
			return
		}
		v := &state.Verdict{Clean: true, Evidence: e.URL, Reason: "approved by @" + e.Reviewer}
		if m.s.Review != nil {
			m.s.Review.ReviewVerdict = v
		}
		m.handoff(st.Slug, "approved by @"+e.Reviewer, e.URL)
		m.evidenceRef(st.Slug, e.PR, e.Pull.HeadSHA, e.ID, nil)
		m.complete("clean review: approved by @" + e.Reviewer + " (" + e.URL + ")")
	case "CHANGES_REQUESTED":
		if !e.Perm.AtLeast(m.set.AnswerPermission) {
			return
		}
		m.notClean("review", "changes requested by @"+e.Reviewer+": "+prose.FirstLine(e.Body), e.URL)
	}
}

// evidenceRef records in a phase's handoff the PR, head commit and review
// or checks its verdict rests on.
func (m *machine) evidenceRef(slug string, pr int, sha string, review int64, checks []int64) {
	if m.s.Review == nil {
		return
	}
	h, ok := m.s.Review.Handoffs[slug]
	if !ok {
		return
	}
	h.PR, h.HeadSHA, h.Review, h.Checks = pr, sha, review, append([]int64(nil), checks...)
	m.s.Review.Handoffs[slug] = h
}

// checks handles the check state of a linked PR's head.
func (m *machine) checks(e Checks) {
	if m.s.Run != state.RunInProgress || m.s.Status != state.InProgress {
		return
	}
	st := m.step()
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
		if m.s.Review != nil {
			m.s.Review.QAVerdict = &state.Verdict{Clean: true, Evidence: e.URL, Reason: "all checks green on " + prose.Short(e.SHA)}
		}
		m.handoff(st.Slug, "all checks green on "+prose.Short(e.SHA), e.URL)
		m.evidenceRef(st.Slug, e.PR, e.SHA, 0, e.IDs)
		m.complete("clean QA: all checks green on " + prose.Short(e.SHA))
	case "failure":
		m.notClean("qa", "checks failed on "+prose.Short(e.SHA)+": "+strings.Join(e.Failed, ", "), e.URL)
	}
}

// notClean returns the flow to the step's return_to with the findings, or
// runs the retry protocol when the step has none.
func (m *machine) notClean(kind, finding, link string) {
	st := m.step()
	finding = prose.OneLine(finding, 300)
	v := &state.Verdict{Clean: false, Reason: finding, Evidence: link}
	if st.ReturnTo == "" || m.s.Review == nil {
		m.fail(finding)
		return
	}
	rl := m.s.Review
	if kind == "review" {
		rl.ReviewVerdict = v
	} else {
		rl.QAVerdict = v
	}
	rl.ReviewCycle++
	rl.Iteration++
	rl.ReturnToPlanReason = finding
	rl.FailureHistory = append(rl.FailureHistory, prose.Normalise(finding))
	m.s.Status = state.Failed
	m.setProgress(state.Failed)
	m.s.Completed = append(m.s.Completed, state.CompletedStep{Step: m.s.Step, Slug: st.Slug, Name: st.Name, At: m.now, Outcome: "NOT CLEAN — " + finding, Cycle: m.s.Cycle})
	m.changed = true
	if n := len(rl.FailureHistory); n >= 3 && rl.FailureHistory[n-1] == rl.FailureHistory[n-2] && rl.FailureHistory[n-2] == rl.FailureHistory[n-3] {
		m.stop(stops.KillSpiral, "the same finding came back three review cycles in a row: "+finding)
		return
	}
	if rl.Iteration > rl.MaxIterations {
		m.stop(stops.StopMaxIterations, fmt.Sprintf("%d iterations reached without a clean review and QA", rl.MaxIterations))
		return
	}
	m.rollbackTo(st.ReturnTo, finding)
}

// rollbackTo returns to an earlier step (review loop) with a reason.
func (m *machine) rollbackTo(slug, reason string) {
	i := m.f.Index(slug)
	for j := i; j < len(m.s.Steps); j++ {
		m.s.Steps[j].Status = state.NotStarted
		m.s.Steps[j].Retries = 0
	}
	if m.s.Review != nil {
		m.s.Review.Architect, m.s.Review.Critic = nil, nil
	}
	m.s.LastSession = m.session("returned to "+slug, reason)
	m.post("announce", "↩️ Returning to **"+m.f.Steps[i].Name+"** (review cycle "+fmt.Sprint(m.s.Review.ReviewCycle)+"): "+textsafe.Escape(reason))
	m.enter(i + 1)
}

// note posts a one-off notice keyed so it is never repeated.
func (m *machine) note(key, text string) {
	if m.owed("note:" + key) {
		m.post("reply", text)
	}
}
