package engine

import (
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// rule is the trust rules' view of the settings.
func (m *inputs) rule() evidence.Rule {
	return evidence.Rule{Answer: m.Set.AnswerPermission, KeepStale: m.Set.Config != nil && m.Set.Config.KeepStaleApprovals}
}

// linkVouch records or drops the vouch of a PR's link (evidence.Rule.Vouch).
func (m *inputs) linkVouch(pr int, e *evidence.PullEdit) {
	if vs, changed := m.rule().Vouch(m.S.LinkVouches, pr, e); changed {
		m.S.LinkVouches = vs
		m.Changed = true
	}
}

// TrustedPull is the trusted-PR rule (evidence.Rule.Trusted) with s's link
// vouches.
func TrustedPull(set machine.Settings, s *state.State, p *evidence.PullFacts) (bool, string) {
	m := &inputs{M: &machine.M{Set: set, S: s}}
	return m.trustedPull(p)
}

func (m *inputs) trustedPull(p *evidence.PullFacts) (bool, string) {
	var vs []state.LinkVouch
	if m.S != nil {
		vs = m.S.LinkVouches
	}
	return m.rule().Trusted(vs, p)
}
