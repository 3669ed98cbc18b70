package engine

import (
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func (m *inputs) pullSeen(e events.PullSeen) {
	p := e.Pull
	if p == nil || p.HeadSHA == "" {
		return
	}
	trusted, _ := m.trustedPull(p)
	for i := range m.S.PRChecks {
		r := &m.S.PRChecks[i]
		if r.PR != p.Number {
			continue
		}
		if r.Head != p.HeadSHA {
			// The gate's head stays: the new head did not pass it.
			*r = state.PRCheck{PR: p.Number, Head: p.HeadSHA, Trusted: trusted, GateHead: r.GateHead}
			m.Changed = true
		} else if r.Trusted != trusted {
			r.Trusted = trusted
			m.Changed = true
		}
		return
	}
	m.S.PRChecks = append(m.S.PRChecks, state.PRCheck{PR: p.Number, Head: p.HeadSHA, Trusted: trusted})
	m.Changed = true
}

func (m *inputs) checkShown(e events.CheckShown) {
	for i := range m.S.PRChecks {
		r := &m.S.PRChecks[i]
		if r.PR == e.PR && r.Head == e.Head && (r.Shown != e.Hash || r.Pending != e.Pending) {
			r.Shown, r.Pending = e.Hash, e.Pending
			m.Changed = true
		}
	}
}

// click applies a button of the PR check. Only a button of the gate open
// now answers it (the identifier embeds the gate); anything else is stale
// and ignored, so a redelivered or late click never decides twice.
func (m *inputs) click(e events.Click) {
	g := m.S.Gate
	tok, letter, ok := strings.Cut(e.Identifier, ".")
	if !ok || g == nil || m.S.Run == state.RunStopped || tok != checkview.GateToken(g.ID) {
		return
	}
	if _, valid := g.Option(letter); !valid {
		return
	}
	if e.PermErr {
		return // fail closed: the click is dropped; the buttons stay
	}
	if !e.Perm.AtLeast(m.Set.AnswerPermission) {
		key := "unauth-click:" + strings.ToLower(e.Sender) + ":" + g.ID
		if m.Owed(key) {
			m.Post("reply", prose.UnauthorizedClick(e.Sender, string(m.Set.AnswerPermission), letter))
		}
		return
	}
	if m.vote(events.Comment{Author: e.Sender, At: e.At, URL: e.URL}, letter, "clicked in the PR check", state.VoteCheck, e) {
		return
	}
	m.Answer(events.Comment{Author: e.Sender, At: e.At, URL: e.URL}, letter, "clicked in the PR check")
}

// Approves reports a review state that counts toward trusting a PR: only
// an approval (the reviewer's permission is checked by the rule).
func Approves(reviewState string) bool { return reviewState == "APPROVED" }

// CheckWritten decides, after a write of the check run on PR pr's head
// failed with class (ErrNone: written), whether the check stays pending —
// a transient failure or a rate limit is tried again by a later pass; a
// refusal (a workflow without checks: write gets 403) is given up until
// the check shows something new — and whether that changes the mark st
// records (tell: give the engine a CheckShown).
func CheckWritten(st *state.State, pr int, head string, class ErrClass) (pending, tell bool) {
	pending = class.Defers()
	var recs []state.PRCheck
	if st != nil {
		recs = st.PRChecks
	}
	r, _ := checkview.Record(recs, pr, head)
	return pending, r.Pending != pending
}

// ForkHead reports a PR whose head repository (headRepo) is not the
// issue's repository (repo): a fork's, which the trusted-PR rule treats
// apart.
func ForkHead(headRepo, repo string) bool { return !strings.EqualFold(headRepo, repo) }
