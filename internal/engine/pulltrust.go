package engine

import (
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// The PR evidence types are fields of the engine's events (PullRead,
// Review, Checks, PRLinked); the aliases let the callers that build those
// events keep naming them through the engine.
type (
	PullFacts    = evidence.PullFacts
	PullEdit     = evidence.PullEdit
	PullApproval = evidence.PullApproval
	ReviewRead   = evidence.ReviewRead
	CheckRead    = evidence.CheckRead
	PermRead     = evidence.PermRead
)

// rule is the trust rules' view of the settings.
func (m *machine) rule() evidence.Rule {
	return evidence.Rule{Answer: m.set.AnswerPermission, KeepStale: m.set.Config != nil && m.set.Config.KeepStaleApprovals}
}

// linkVouch records or drops the vouch of a PR's link (evidence.Rule.Vouch).
func (m *machine) linkVouch(pr int, e *PullEdit) {
	if vs, changed := m.rule().Vouch(m.s.LinkVouches, pr, e); changed {
		m.s.LinkVouches = vs
		m.changed = true
	}
}

// TrustedPull is the trusted-PR rule (evidence.Rule.Trusted) with s's link
// vouches.
func TrustedPull(set Settings, s *state.State, p *PullFacts) (bool, string) {
	m := &machine{set: set, s: s}
	return m.trustedPull(p)
}

func (m *machine) trustedPull(p *PullFacts) (bool, string) {
	var vs []state.LinkVouch
	if m.s != nil {
		vs = m.s.LinkVouches
	}
	return m.rule().Trusted(vs, p)
}
