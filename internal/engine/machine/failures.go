package machine

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// MaxRetries is the number of consecutive failures that escalate (seed 002).
const MaxRetries = 3

// Fail runs the retry protocol of seed 002.
func (m *M) Fail(reason string) {
	st := m.Step()
	reason = prose.OneLine(reason, 200)
	if reason == "" {
		reason = "no reason given"
	}
	m.S.RetryCount++
	m.S.RetryLog = append(m.S.RetryLog, state.RetryEntry{
		Attempt: m.S.RetryCount, Step: m.S.Step, Name: st.Name,
		SubStep: fmt.Sprintf("%d %s", m.S.SubStep.Phase, m.S.SubStep.Name), Reason: reason, At: m.Now,
	})
	m.Changed = true
	breaker := m.S.FailedSessions[st.Slug] >= MaxRetries
	if m.S.RetryCount < MaxRetries && !breaker {
		m.setProgress(state.InProgress)
		// Auto-retry from the recorded sub-step (not from the beginning).
		m.rerun(fmt.Sprintf("attempt %d failed: %s — retrying automatically (retry %d/%d) from sub-step %d %s.",
			m.S.RetryCount, textsafe.Escape(reason), m.S.RetryCount, MaxRetries, m.S.SubStep.Phase, m.S.SubStep.Name))
		return
	}
	m.escalate(reason, breaker)
}

// rerun re-executes the current step after a failure.
func (m *M) rerun(note string) {
	st := m.Step()
	ex := m.Set.Config.ExecutorFor(st.Slug)
	if ex.Kind == "dispatch" || ex.Kind == "comment" {
		m.run()
		return
	}
	m.S.Exec = &state.Execution{Executor: ex.Kind, Attempt: m.S.RetryCount + 1, Announced: true, StartedAt: m.execStart()}
	m.Post("announce", fmt.Sprintf("🔁 **%s** — %s", st.Name, note))
}

// escalate stops auto-retry: failed, blocker, SKILL FAILED Choose.
func (m *M) escalate(reason string, breaker bool) {
	st := m.Step()
	m.S.RetryCount = MaxRetries
	m.S.Status = state.Failed
	m.setProgress(state.Failed)
	m.S.Run = state.RunFailed
	if m.S.FailedSessions == nil {
		m.S.FailedSessions = map[string]int{}
	}
	m.S.FailedSessions[st.Slug]++
	blocker := fmt.Sprintf("[%s] %s failed %d consecutive times at sub_step %d %s. Last failure: %s. Auto-retry exhausted.",
		st.Slug, st.Name, MaxRetries, m.S.SubStep.Phase, m.S.SubStep.Name, reason)
	if breaker {
		blocker = fmt.Sprintf("[%s] circuit breaker: %s has failed in %d sessions; auto-retry is off until someone decides. Last failure: %s.",
			st.Slug, st.Name, m.S.FailedSessions[st.Slug], reason)
	}
	m.removeBlockersFor(st.Slug)
	m.S.Blockers = append(m.S.Blockers, blocker)
	m.S.LastSession = m.session("failed", "auto-retry exhausted: "+reason)
	m.openSkillFailed(reason)
}

// reopenFailed asks the SKILL FAILED question again for a failed step whose
// question was closed without a retry or a skip (abort, then resume; or a
// declined rollback). A failed step never runs again without an answer.
func (m *M) reopenFailed() {
	reason := m.lastFailureOf(m.S.Step)
	if reason == "" {
		reason = "unknown"
	}
	m.openSkillFailed(reason)
}

// openSkillFailed opens the SKILL FAILED Choose of seed 002 and marks the
// run failed.
func (m *M) openSkillFailed(reason string) {
	st := m.Step()
	m.openGate(state.GateSkillFailed, fmt.Sprintf("SKILL FAILED: %s — %d consecutive failures", st.Name, MaxRetries),
		[]string{
			fmt.Sprintf("Step: %d — %s", m.S.Step, st.Name),
			fmt.Sprintf("SubStep: %d — %s", m.S.SubStep.Phase, m.S.SubStep.Name),
			"Last failure reason: " + textsafe.Code(reason),
		},
		[]state.Option{
			{Letter: "A", Text: "Retry with a fresh executor session", Action: state.ActRetryFresh},
			{Letter: "B", Text: "Skip this step with warning", Action: state.ActSkip},
			{Letter: "C", Text: "Abort — investigate and fix manually", Action: state.ActAbort},
		}, "A", "fresh context often resolves persistent failures")
	m.S.Gate.Next = st.Slug
	m.S.Run = state.RunFailed
}

// checkLinked asks for the evidence of every linked PR.
func (m *M) checkLinked() {
	for _, pr := range m.S.LinkedPRs {
		m.Ask(events.Query{Kind: events.QCheckPR, PR: pr})
	}
}
