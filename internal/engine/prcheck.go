package engine

import (
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// gatePassed records each linked PR's head as the one the merge gate
// passed on, when the step that just completed or was skipped is the
// flow's merge gate step.
func (m *machine) gatePassed(slug string) {
	if m.s.Review != nil || m.s.Flow == "review-loop" || slug != checkview.MergeGateStep(m.set.Config, m.s.Flow) {
		return
	}
	for i := range m.s.PRChecks {
		m.s.PRChecks[i].GateHead = m.s.PRChecks[i].Head
	}
}

func (m *machine) pullSeen(e PullSeen) {
	p := e.Pull
	if p == nil || p.HeadSHA == "" {
		return
	}
	trusted, _ := m.trustedPull(p)
	for i := range m.s.PRChecks {
		r := &m.s.PRChecks[i]
		if r.PR != p.Number {
			continue
		}
		if r.Head != p.HeadSHA {
			// The gate's head stays: the new head did not pass it.
			*r = state.PRCheck{PR: p.Number, Head: p.HeadSHA, Trusted: trusted, GateHead: r.GateHead}
			m.changed = true
		} else if r.Trusted != trusted {
			r.Trusted = trusted
			m.changed = true
		}
		return
	}
	m.s.PRChecks = append(m.s.PRChecks, state.PRCheck{PR: p.Number, Head: p.HeadSHA, Trusted: trusted})
	m.changed = true
}

func (m *machine) checkShown(e CheckShown) {
	for i := range m.s.PRChecks {
		r := &m.s.PRChecks[i]
		if r.PR == e.PR && r.Head == e.Head && (r.Shown != e.Hash || r.Pending != e.Pending) {
			r.Shown, r.Pending = e.Hash, e.Pending
			m.changed = true
		}
	}
}

// click applies a button of the PR check. Only a button of the gate open
// now answers it (the identifier embeds the gate); anything else is stale
// and ignored, so a redelivered or late click never decides twice.
func (m *machine) click(e Click) {
	g := m.s.Gate
	tok, letter, ok := strings.Cut(e.Identifier, ".")
	if !ok || g == nil || m.s.Run == state.RunStopped || tok != checkview.GateToken(g.ID) {
		return
	}
	if _, valid := g.Option(letter); !valid {
		return
	}
	if e.PermErr {
		return // fail closed: the click is dropped; the buttons stay
	}
	if !e.Perm.AtLeast(m.set.AnswerPermission) {
		key := "unauth-click:" + strings.ToLower(e.Sender) + ":" + g.ID
		if m.owed(key) {
			m.post("reply", prose.UnauthorizedClick(e.Sender, string(m.set.AnswerPermission), letter))
		}
		return
	}
	m.answer(Comment{Author: e.Sender, At: e.At, URL: e.URL}, letter, "clicked in the PR check")
}
