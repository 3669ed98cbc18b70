package machine

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// EvidenceNeeded is the refusal of a "done" report on a step that only
// evidence of kind (review or checks) completes.
func (m *M) EvidenceNeeded(kind string) string {
	if kind == "review" {
		return fmt.Sprintf("**%s** is clean only on evidence: an approving review of the linked PR by someone other than its author with at least %s permission. A reported \"done\" is not enough.", m.S.Name, m.Set.AnswerPermission)
	}
	return fmt.Sprintf("**%s** is clean only on evidence: all checks green on the linked PR's head. A reported \"done\" is not enough; `/autopilot skip <reason>` records a reasoned skip.", m.S.Name)
}

// evidenceWanted tells the announcement of an evidence step what completes it.
func (m *M) evidenceWanted(st flow.Step) string {
	back := ""
	if st.ReturnTo != "" && m.F.Index(st.ReturnTo) >= 0 {
		back = " A verdict that is not clean returns to " + m.F.Steps[m.F.Index(st.ReturnTo)].Name + "."
	}
	if st.Evidence == "review" {
		return fmt.Sprintf("waiting for an approving review of the linked PR by someone other than its author (at least %s permission).%s", m.Set.AnswerPermission, back)
	}
	return "waiting for every check on the linked PR's head to pass (read when the step starts, on each push and on the scheduled sweep); `/autopilot skip <reason>` records a reasoned skip." + back
}

// Handoff records a phase's handoff with the links it rests on.
func (m *M) Handoff(slug, summary string, links ...string) {
	if m.S.Review == nil {
		return
	}
	if m.S.Review.Handoffs == nil {
		m.S.Review.Handoffs = map[string]state.Handoff{}
	}
	ls := []string{}
	for _, l := range links {
		if l != "" {
			ls = append(ls, l)
		}
	}
	if m.S.Review.Snapshot != "" {
		ls = append(ls, "snapshot:"+m.S.Review.Snapshot)
	}
	m.S.Review.Handoffs[slug] = state.Handoff{Summary: prose.OneLine(summary, 300), Links: ls, At: m.Now}
	m.Changed = true
}

// NotClean returns the flow to the step's return_to with the findings, or
// runs the retry protocol when the step has none.
func (m *M) NotClean(kind, finding, link string) {
	st := m.Step()
	finding = prose.OneLine(finding, 300)
	v := &state.Verdict{Clean: false, Reason: finding, Evidence: link}
	if st.ReturnTo == "" || m.S.Review == nil {
		m.Fail(finding)
		return
	}
	rl := m.S.Review
	if kind == "review" {
		rl.ReviewVerdict = v
	} else {
		rl.QAVerdict = v
	}
	rl.ReviewCycle++
	rl.Iteration++
	rl.ReturnToPlanReason = finding
	rl.FailureHistory = append(rl.FailureHistory, prose.Normalise(finding))
	m.S.Status = state.Failed
	m.setProgress(state.Failed)
	m.S.Completed = append(m.S.Completed, state.CompletedStep{Step: m.S.Step, Slug: st.Slug, Name: st.Name, At: m.Now, Outcome: "NOT CLEAN — " + finding, Cycle: m.S.Cycle})
	m.Changed = true
	if n := len(rl.FailureHistory); n >= 3 && rl.FailureHistory[n-1] == rl.FailureHistory[n-2] && rl.FailureHistory[n-2] == rl.FailureHistory[n-3] {
		m.Stop(stops.KillSpiral, "the same finding came back three review cycles in a row: "+finding)
		return
	}
	if rl.Iteration > rl.MaxIterations {
		m.Stop(stops.StopMaxIterations, fmt.Sprintf("%d iterations reached without a clean review and QA", rl.MaxIterations))
		return
	}
	m.rollbackTo(st.ReturnTo, finding)
}

// rollbackTo returns to an earlier step (review loop) with a reason.
func (m *M) rollbackTo(slug, reason string) {
	i := m.F.Index(slug)
	for j := i; j < len(m.S.Steps); j++ {
		m.S.Steps[j].Status = state.NotStarted
		m.S.Steps[j].Retries = 0
	}
	if m.S.Review != nil {
		m.S.Review.Architect, m.S.Review.Critic = nil, nil
	}
	m.S.LastSession = m.session("returned to "+slug, reason)
	m.Post("announce", "↩️ Returning to **"+m.F.Steps[i].Name+"** (review cycle "+fmt.Sprint(m.S.Review.ReviewCycle)+"): "+textsafe.Escape(reason))
	m.enter(i + 1)
}

// gatePassed records each linked PR's head as the one the merge gate
// passed on, when the step that just completed or was skipped is the
// flow's merge gate step.
func (m *M) gatePassed(slug string) {
	if m.S.Review != nil || m.S.Flow == "review-loop" || slug != checkview.MergeGateStep(m.Set.Config, m.S.Flow) {
		return
	}
	for i := range m.S.PRChecks {
		m.S.PRChecks[i].GateHead = m.S.PRChecks[i].Head
	}
}
