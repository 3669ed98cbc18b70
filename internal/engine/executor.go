package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/reply"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// MaxRetries is the number of consecutive failures that escalate (seed 002).
const MaxRetries = 3

// executorReport handles /autopilot done|fail|progress for the current step.
func (m *machine) executorReport(c Comment, r reply.Result, accept func(), refuse func(string, string)) {
	switch r.Cmd {
	case "progress":
		if r.Phase < m.s.SubStep.Phase {
			refuse("phase-backwards", fmt.Sprintf("sub-step phases only move forward (current phase %d).", m.s.SubStep.Phase))
			return
		}
		if r.Phase == 0 && r.Name != state.AwaitingInvocation || r.Name == state.AwaitingInvocation && r.Phase != 0 {
			refuse("reserved-name", "`awaiting-invocation` is reserved for phase 0 (and phase 0 for it).")
			return
		}
		accept()
		m.s.SubStep = state.SubStep{Phase: r.Phase, Name: r.Name, Detail: prose.OneLine(r.Text, 120)}
		if i := m.s.Step - 1; i >= 0 && r.Text != "" {
			m.s.Steps[i].Note = prose.OneLine(r.Text, 40)
		}
	case "fail":
		accept()
		m.fail(r.Text)
	case "done":
		m.doneReport(c, r, accept, refuse)
	}
}

// doneReport applies `/autopilot done`: refused while the step waits for
// evidence or its report cannot be recorded, otherwise the step completes
// (or goes on to its consensus or approval).
func (m *machine) doneReport(c Comment, r reply.Result, accept func(), refuse func(string, string)) {
	st := m.step()
	switch {
	case st.Evidence != "":
		refuse("needs-evidence", m.evidenceNeeded(st.Evidence))
		return
	case c.DeclaredErr != "":
		refuse("bad-task-block", "the task block could not be read, so nothing was recorded: "+textsafe.Escape(c.DeclaredErr))
		return
	case c.DeclaredTooLarge != "":
		refuse("state-full", "nothing was recorded: "+c.DeclaredTooLarge)
		return
	case st.Interview && strings.TrimSpace(r.Text) == "":
		refuse("rationale-required", "leaving the interview needs a recorded rationale: `/autopilot done <why the requirements are complete>`.")
		return
	}
	accept()
	if r.Confidence != nil {
		m.s.Limits.LastConfidence = *r.Confidence
		m.s.Limits.HasConfidence = true
	}
	m.addTasks(c.Declared, st.Slug)
	summary := strings.TrimSpace(r.Text)
	if summary == "" {
		summary = "reported done by @" + c.Author
	}
	if m.s.Review != nil {
		m.handoff(st.Slug, summary, c.URL)
	}
	if st.Interview && m.s.Review != nil {
		m.s.Review.InterviewRationale = prose.OneLine(summary, 300)
	}
	if st.Consensus {
		m.planReported()
		return
	}
	if st.Gate == "approval" {
		m.openApprovalGate(st)
		return
	}
	if n := len(c.Declared); n > 0 {
		summary = fmt.Sprintf("%s (%d %s declared)", summary, n, prose.Plural(n, st.Jira))
	}
	m.complete(summary)
}

// addTasks appends declared epics/tasks, numbered after the existing ones.
func (m *machine) addTasks(ts []state.Task, step string) {
	if len(ts) == 0 {
		return
	}
	for _, t := range ts {
		t.ID = fmt.Sprintf("%02d", len(m.s.Tasks)+1)
		t.Step = step
		t.Jira = state.JiraPending
		if m.s.JiraOff != "" {
			t.Jira = state.JiraLocal
		}
		if t.IdemKey == "" {
			t.IdemKey = IdemKey(m.s.Repo, m.s.Issue, t.ID, m.s.Cycle)
		}
		m.s.Tasks = append(m.s.Tasks, t)
	}
	if i := m.s.Step - 1; i >= 0 {
		m.s.Steps[i].Note = fmt.Sprintf("%d %s", len(ts), prose.Plural(len(ts), prose.KindWord(ts[0].Kind)))
		m.s.Steps[i].Declared = true
	}
	if m.s.JiraEnabled != nil && *m.s.JiraEnabled {
		m.ask(Query{Kind: QJiraSync})
	}
}

// IdemKey is the idempotency key of a task: stable across runs (so a
// rebuilt state finds the same Jira issues), stored on the Jira issue as a label.
func IdemKey(repo string, issue int, id string, cycle int) string {
	return idem.Key(repo, issue, fmt.Sprintf("c%d/%s", cycle, id))
}

// fail runs the retry protocol of seed 002.
func (m *machine) fail(reason string) {
	st := m.step()
	reason = prose.OneLine(reason, 200)
	if reason == "" {
		reason = "no reason given"
	}
	m.s.RetryCount++
	m.s.RetryLog = append(m.s.RetryLog, state.RetryEntry{
		Attempt: m.s.RetryCount, Step: m.s.Step, Name: st.Name,
		SubStep: fmt.Sprintf("%d %s", m.s.SubStep.Phase, m.s.SubStep.Name), Reason: reason, At: m.now,
	})
	m.changed = true
	breaker := m.s.FailedSessions[st.Slug] >= MaxRetries
	if m.s.RetryCount < MaxRetries && !breaker {
		m.setProgress(state.InProgress)
		// Auto-retry from the recorded sub-step (not from the beginning).
		m.rerun(fmt.Sprintf("attempt %d failed: %s — retrying automatically (retry %d/%d) from sub-step %d %s.",
			m.s.RetryCount, textsafe.Escape(reason), m.s.RetryCount, MaxRetries, m.s.SubStep.Phase, m.s.SubStep.Name))
		return
	}
	m.escalate(reason, breaker)
}

// rerun re-executes the current step after a failure.
func (m *machine) rerun(note string) {
	st := m.step()
	ex := m.set.Config.ExecutorFor(st.Slug)
	if ex.Kind == "dispatch" || ex.Kind == "comment" {
		m.run()
		return
	}
	m.s.Exec = &state.Execution{Executor: ex.Kind, Attempt: m.s.RetryCount + 1, Announced: true, StartedAt: m.execStart()}
	m.post("announce", fmt.Sprintf("🔁 **%s** — %s", st.Name, note))
}

// escalate stops auto-retry: failed, blocker, SKILL FAILED Choose.
func (m *machine) escalate(reason string, breaker bool) {
	st := m.step()
	m.s.RetryCount = MaxRetries
	m.s.Status = state.Failed
	m.setProgress(state.Failed)
	m.s.Run = state.RunFailed
	if m.s.FailedSessions == nil {
		m.s.FailedSessions = map[string]int{}
	}
	m.s.FailedSessions[st.Slug]++
	blocker := fmt.Sprintf("[%s] %s failed %d consecutive times at sub_step %d %s. Last failure: %s. Auto-retry exhausted.",
		st.Slug, st.Name, MaxRetries, m.s.SubStep.Phase, m.s.SubStep.Name, reason)
	if breaker {
		blocker = fmt.Sprintf("[%s] circuit breaker: %s has failed in %d sessions; auto-retry is off until someone decides. Last failure: %s.",
			st.Slug, st.Name, m.s.FailedSessions[st.Slug], reason)
	}
	m.removeBlockersFor(st.Slug)
	m.s.Blockers = append(m.s.Blockers, blocker)
	m.s.LastSession = m.session("failed", "auto-retry exhausted: "+reason)
	m.openSkillFailed(reason)
}

// reopenFailed asks the SKILL FAILED question again for a failed step whose
// question was closed without a retry or a skip (abort, then resume; or a
// declined rollback). A failed step never runs again without an answer.
func (m *machine) reopenFailed() {
	reason := m.lastFailureOf(m.s.Step)
	if reason == "" {
		reason = "unknown"
	}
	m.openSkillFailed(reason)
}

// openSkillFailed opens the SKILL FAILED Choose of seed 002 and marks the
// run failed.
func (m *machine) openSkillFailed(reason string) {
	st := m.step()
	m.openGate("skill-failed", fmt.Sprintf("SKILL FAILED: %s — %d consecutive failures", st.Name, MaxRetries),
		[]string{
			fmt.Sprintf("Step: %d — %s", m.s.Step, st.Name),
			fmt.Sprintf("SubStep: %d — %s", m.s.SubStep.Phase, m.s.SubStep.Name),
			"Last failure reason: " + textsafe.Code(reason),
		},
		[]state.Option{
			{Letter: "A", Text: "Retry with a fresh executor session", Action: state.ActRetryFresh},
			{Letter: "B", Text: "Skip this step with warning", Action: state.ActSkip},
			{Letter: "C", Text: "Abort — investigate and fix manually", Action: state.ActAbort},
		}, "A", "fresh context often resolves persistent failures")
	m.s.Gate.Next = st.Slug
	m.s.Run = state.RunFailed
}

// dispatched records the run id of a dispatch (or its failure).
func (m *machine) dispatched(e Dispatched) {
	// The dispatch was answered: its outbox entry is settled.
	for i, o := range m.s.Outbox {
		if o.Kind == state.EffDispatch && o.Marker == e.Session {
			m.s.Outbox = append(m.s.Outbox[:i:i], m.s.Outbox[i+1:]...)
			m.changed = true
			break
		}
	}
	if m.s.Exec == nil || m.s.Exec.Session != e.Session {
		return
	}
	if e.Err != "" {
		m.s.Limits.FailedWaves++
		m.fail("dispatch failed: " + e.Err)
		return
	}
	if m.s.Exec.RunID != e.RunID {
		m.s.Exec.RunID = e.RunID
		m.changed = true
	}
}

// runCompleted completes or fails the dispatched step with the run that
// MatchRun accepts; any other run changes nothing.
func (m *machine) runCompleted(e RunCompleted) {
	if ok, _ := MatchRun(m.set, m.s, e); !ok {
		return
	}
	ex := m.s.Exec
	ex.RunID = e.RunID
	m.changed = true
	if e.Conclusion == "success" {
		m.complete("workflow run succeeded: " + e.URL)
		return
	}
	m.s.Limits.FailedWaves++
	why := fmt.Sprintf("workflow run %d (session %s) concluded %s", e.RunID, ex.Session, e.Conclusion)
	if e.URL != "" {
		why += " — " + e.URL
	}
	m.fail(why)
}

// MatchRun is the run rule (evidence.RunRule.Match): only the recorded
// run id, or the session token under the strict checks, completes the
// dispatched step of s.
func MatchRun(set Settings, s *state.State, e RunCompleted) (bool, string) {
	rule := evidence.RunRule{Repo: set.Repo}
	if s != nil && s.Exec != nil && s.Exec.RunID == 0 {
		rule = runRule(set, s.Slug) // the workflow file matters only for a token match
	}
	return rule.Match(s, evidence.Run{ID: e.RunID, DisplayTitle: e.DisplayTitle,
		Path: e.Path, Event: e.Event, HeadRepo: e.HeadRepo, CreatedAt: e.CreatedAt})
}

// TokenRunTrusted checks a run that carries the session token but was not
// recorded by id (evidence.RunRule.TokenTrusted); the dispatch retry uses
// it before adopting a run.
func TokenRunTrusted(set Settings, slug string, ex *state.Execution, path, event, headRepo string, created time.Time) (bool, string) {
	return runRule(set, slug).TokenTrusted(ex, evidence.Run{Path: path, Event: event, HeadRepo: headRepo, CreatedAt: created})
}

func runRule(set Settings, slug string) evidence.RunRule {
	if set.Config == nil { // no configuration: no workflow a token run could match
		return evidence.RunRule{Repo: set.Repo}
	}
	return evidence.RunRule{Workflow: set.Config.ExecutorFor(slug).Workflow, Repo: set.Repo}
}

// tick is the sweep: executor timeouts and wall-clock limits at boundaries.
func (m *machine) tick(e Tick) {
	if m.s.Run == state.RunDone || m.s.Run == state.RunStopped {
		return
	}
	if ex := m.s.Exec; ex != nil && ex.Executor == "dispatch" && m.s.Status == state.InProgress {
		timeout := m.set.Config.ExecutorFor(m.s.Slug).Timeout
		if m.now.Sub(ex.DispatchedAt) > timeoutDur(timeout) {
			m.s.Limits.FailedWaves++
			m.fail(fmt.Sprintf("dispatched run (session %s) did not report within %s", ex.Session, timeoutDur(timeout)))
			return
		}
	}
	if m.awaitingEvidence() {
		m.checkLinked()
	}
	atBoundary := m.s.Run == state.RunAwaitingDecision || m.s.Status == state.NotStarted
	if !atBoundary {
		return
	}
	if e.BudgetLow {
		m.stop("resource-overload", "the API rate budget is nearly spent")
		return
	}
	if m.hoursExceeded() {
		m.stop("max-hours-exceeded", fmt.Sprintf("the run has been going for more than %.1f hours", m.set.Config.Limits.MaxHours))
	}
}

// prLinked records a PR that links this issue (opened, or edited to link
// it) and, while the current step waits for evidence, reads its reviews or
// checks. A PR already linked is read again: a push (synchronize) or an
// edit may have changed what its head's checks say.
func (m *machine) prLinked(e PRLinked) {
	m.linkVouch(e.PR, e.Edit)
	if !slices.Contains(m.s.LinkedPRs, e.PR) {
		m.s.LinkedPRs = append(m.s.LinkedPRs, e.PR)
		m.changed = true
	}
	if m.awaitingEvidence() {
		m.ask(Query{Kind: QCheckPR, PR: e.PR})
	}
}

// awaitingEvidence reports whether the current step is running and only
// evidence (an approving review, green checks) can complete it.
func (m *machine) awaitingEvidence() bool {
	return m.step().Evidence != "" && m.s.Status == state.InProgress && m.s.Run == state.RunInProgress
}

// checkLinked asks for the evidence of every linked PR.
func (m *machine) checkLinked() {
	for _, pr := range m.s.LinkedPRs {
		m.ask(Query{Kind: QCheckPR, PR: pr})
	}
}
