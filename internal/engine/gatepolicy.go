package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/approvals"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// An open gate with an approver policy (config approvals:) is decided by
// votes, not by the first answer: the rules are package approvals'; this
// file feeds them the answers and the clock and carries out what they say.

// gatePolicy returns the approver policy of the open gate, if one applies.
func (m *inputs) gatePolicy() (config.Approval, bool) {
	if m.S == nil || m.S.Gate == nil {
		return config.Approval{}, false
	}
	return m.Set.Config.ApprovalFor(m.S.Gate.Kind)
}

// rejectingActions are the gate actions that say no: one vote for them
// decides a gate whose policy sets reject_wins, and on_expire: reject
// picks the first of them.
var rejectingActions = map[state.Action]bool{
	state.ActChanges: true, state.ActAbort: true, state.ActStay: true, state.ActExecute: true, state.ActLowConfStop: true,
	state.ActDeployReject: true,
}

func gateView(g *state.Gate) approvals.Gate {
	v := approvals.Gate{Recommend: g.Recommend}
	for _, o := range g.Options {
		kind, _ := o.Action.Split()
		v.Options = append(v.Options, approvals.Option{Letter: o.Letter, Rejecting: rejectingActions[kind]})
	}
	return v
}

func ballotOf(g *state.Gate) state.Ballot {
	if g.Ballot == nil {
		return state.Ballot{}
	}
	return *g.Ballot
}

// vote applies a valid answer (a comment, or a click when c.ID is 0) to
// a gate with an approver policy. It reports false when the gate has no
// policy: the answer decides as before. When the policy needs facts the
// engine has not been given (team membership, CODEOWNERS, the authors),
// it asks for them (events.QApprovers, answered by giving again) and leaves the
// answer unclassified until then.
func (m *inputs) vote(c events.Comment, letter, reason string, where state.VoteWhere, again events.Event) bool {
	p, ok := m.gatePolicy()
	if !ok {
		return false
	}
	g := m.S.Gate
	b := ballotOf(g)
	if m.askFacts(p, b, again, c.Author) {
		return true
	}
	var f approvals.Facts
	if m.facts != nil {
		f = *m.facts
	}
	v := state.Vote{By: c.Author, Option: letter, Where: where, At: c.At, CommentID: c.ID, Link: c.URL}
	r := approvals.Cast(p, gateView(g), b, v, f)
	m.Changed = true
	for _, d := range r.Dropped {
		m.recordVote(g, d.Vote, "vote no longer counts: "+d.Why)
	}
	if r.Decided == "" {
		m.showQuorum(g, approvals.Line(p, b), approvals.Line(p, r.Ballot))
	}
	switch {
	case r.Refused != "":
		g.Ballot = &r.Ballot
		if c.ID != 0 {
			m.ledger(c.ID, state.Rejected("not-an-approver"))
			m.React(c.ID, outbox.ReactConfuse)
		}
		m.voteReply(c, "approver", r.Refused+".")
	case r.Decided == "":
		g.Ballot = &r.Ballot
		if c.ID != 0 {
			m.ledger(c.ID, state.LedgerApplied)
			m.React(c.ID, outbox.ReactUp)
		}
		m.recordVote(g, r.Vote, fmt.Sprintf("vote via %s (%s)", where, r.Vote.Evidence))
		m.voteReply(c, "", "vote counted — "+approvals.Line(p, r.Ballot))
	default:
		if c.ID != 0 {
			m.ledger(c.ID, state.LedgerApplied)
		}
		var who []string
		for _, v := range r.Ballot.Votes {
			if v.Option == r.Decided && (len(r.By) > 1 || strings.EqualFold(v.By, c.Author)) {
				who = append(who, fmt.Sprintf("@%s via %s (%s)", v.By, v.Where, v.Evidence))
			}
		}
		quorum := fmt.Sprintf("decided by %d of %d: %s", len(r.By), max(p.Min, 1), strings.Join(who, ", "))
		if len(r.By) < max(p.Min, 1) {
			quorum = "a rejecting vote decides at once (reject_wins): " + strings.Join(who, ", ")
		}
		if reason = strings.TrimSpace(reason); reason != "" {
			quorum = reason + "; " + quorum
		}
		m.Answer(c, r.Decided, quorum)
	}
	return true
}

// askFacts asks for the facts policy p judges votes on (team membership,
// CODEOWNERS, the authors) when it needs some and the engine has not been
// given them: of the ballot's voters and of voters, for again to be
// applied once more with them (events.Voted). It reports whether it asked.
func (m *inputs) askFacts(p config.Approval, b state.Ballot, again events.Event, voters ...string) bool {
	if !(len(p.Teams) > 0 || p.CodeOwners || p.PreventSelf) || m.facts != nil {
		return false
	}
	ask := &events.ApproversAsk{Teams: p.Teams, CodeOwners: p.CodeOwners, Vote: again}
	for _, v := range b.Votes {
		ask.Logins = append(ask.Logins, v.By)
	}
	ask.Logins = append(ask.Logins, voters...)
	if n := len(m.S.LinkedPRs); n > 0 {
		ask.PR = m.S.LinkedPRs[n-1]
	}
	m.Ask(events.Query{Kind: events.QApprovers, Approvers: ask})
	return true
}

// showQuorum edits the gate's Choose comment, the one people answer, to
// show the quorum line when a vote changed it: one edit of the bot's own
// comment, none when the line is as it was (a refused vote).
func (m *inputs) showQuorum(g *state.Gate, before, after string) {
	if before == after {
		return
	}
	mk := prose.GateMarker(g.ID)
	m.Emit(state.Effect{Kind: state.EffEdit, Marker: mk, Body: prose.GateWith(g, "Approvals: "+after)})
}

// voteReply answers a vote: a reply to its comment, or, for a click, a
// comment on the issue. A refusal (kind set) is explained once per person
// and gate.
func (m *inputs) voteReply(c events.Comment, kind, text string) {
	if kind != "" && !m.Owed(kind+":"+strings.ToLower(c.Author)+":"+m.gateKey()) {
		return
	}
	// Escaped: the reply names people and teams without pinging them.
	text = textsafe.Escape("@" + c.Author + ": " + text)
	if c.ID != 0 {
		m.ReplyTo(c.ID, text)
		return
	}
	m.Post("reply", text)
}

// recordVote puts a vote in Key Decisions: who, the option, where it was
// cast and what it was judged on.
func (m *inputs) recordVote(g *state.Gate, v state.Vote, why string) {
	opt, _ := g.Option(v.Option)
	m.S.Decisions = append(m.S.Decisions, state.Decision{
		Gate: g.ID, Question: g.Title, Option: v.Option, OptionText: opt.Text, By: v.By, At: v.At,
		Link: v.Link, CommentID: v.CommentID, Reason: prose.OneLine(why, 200), GateOpenedAt: g.OpenedAt,
	})
}

// deadlines applies the time rules of the open gate's policy on the
// state's clock (any event, the sweep's tick among them): the reminder and
// the escalation, each one comment once, and the expiry. A question that
// expired and stopped the run starts its clock again once resumed.
func (m *inputs) deadlines() {
	p, ok := m.gatePolicy()
	if !ok {
		return
	}
	g := m.S.Gate
	b := ballotOf(g)
	if m.S.Run != state.RunAwaitingDecision && m.S.Run != state.RunFailed {
		return // stopped or done: nothing is asked now
	}
	if !b.Expired.IsZero() {
		g.Ballot = &state.Ballot{Votes: b.Votes, Since: m.Now}
		m.Changed = true
		return
	}
	since := clockStart(g, b)
	due := approvals.Deadlines(p, since, m.Now, b)
	if !due.Any() {
		return
	}
	waited := m.Now.Sub(since)
	key := fmt.Sprintf("%s-%d", g.ID, since.Unix())
	if due.Remind {
		m.notice(key+"-remind", approvals.Reminder(p, b, g.Title, waited))
	}
	if due.Escalate {
		m.notice(key+"-escalate", approvals.Escalation(p, g.Title, waited))
	}
	b = approvals.Mark(b, due, m.Now)
	g.Ballot = &b
	m.Changed = true
	if !due.Expire {
		return
	}
	letter, stop := approvals.Expiry(p, gateView(g))
	opt, _ := g.Option(letter)
	m.notice(key+"-expire", approvals.Expired(p, g.Title, waited, letter, opt.Text, stop))
	if stop {
		b.Expired = m.Now
		g.Ballot = &b
		m.Stop(stops.StopApprovalExpired, fmt.Sprintf("nobody decided %q within %s (on_expire: %s)", g.Title, p.ExpireAfter, p.OnExpire))
		return
	}
	m.Answer(events.Comment{Author: approvals.ExpiryActor, At: m.Now}, letter, fmt.Sprintf("expired after %s (on_expire: %s)", p.ExpireAfter, p.OnExpire))
}

// gateStatus refreshes, on a state about to be written, the line the
// banner and the PR check show for a gate with a policy: the quorum and the
// time rules as of now.
func (m *inputs) gateStatus() {
	p, ok := m.gatePolicy()
	if !ok {
		return
	}
	g := m.S.Gate
	b := ballotOf(g)
	since := clockStart(g, b)
	b.Status = approvals.Line(p, b) + "; " + approvals.Status(p, since, m.Now, b)
	g.Ballot = &b
}

// clockStart is when the gate's time rules count from: when it was asked,
// or when a resume started its clock again.
func clockStart(g *state.Gate, b state.Ballot) time.Time {
	if !b.Since.IsZero() {
		return b.Since
	}
	return g.OpenedAt
}
