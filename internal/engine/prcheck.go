package engine

import (
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func (m *inputs) pullSeen(e PullSeen) {
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

func (m *inputs) checkShown(e CheckShown) {
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
func (m *inputs) click(e Click) {
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
	m.Answer(Comment{Author: e.Sender, At: e.At, URL: e.URL}, letter, "clicked in the PR check")
}
