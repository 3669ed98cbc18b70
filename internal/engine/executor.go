package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// executorReport handles /autopilot done|fail|progress for the current step.
func (m *inputs) executorReport(c events.Comment, r grammar.Result, accept func(), refuse func(string, string)) {
	switch r.Cmd {
	case "progress":
		if r.Phase < m.S.SubStep.Phase {
			refuse("phase-backwards", fmt.Sprintf("sub-step phases only move forward (current phase %d).", m.S.SubStep.Phase))
			return
		}
		if r.Phase == 0 && r.Name != state.AwaitingInvocation || r.Name == state.AwaitingInvocation && r.Phase != 0 {
			refuse("reserved-name", "`awaiting-invocation` is reserved for phase 0 (and phase 0 for it).")
			return
		}
		accept()
		m.S.SubStep = state.SubStep{Phase: r.Phase, Name: r.Name, Detail: prose.OneLine(r.Text, 120)}
		if i := m.S.Step - 1; i >= 0 && r.Text != "" {
			m.S.Steps[i].Note = prose.OneLine(r.Text, 40)
		}
	case "fail":
		accept()
		m.Fail(r.Text)
	case "done":
		m.doneReport(c, r, accept, refuse)
	}
}

// doneReport applies `/autopilot done`: refused while the step waits for
// evidence or its report cannot be recorded, otherwise the step completes
// (or goes on to its consensus or approval).
func (m *inputs) doneReport(c events.Comment, r grammar.Result, accept func(), refuse func(string, string)) {
	st := m.Step()
	switch {
	case st.Evidence != "":
		refuse("needs-evidence", m.EvidenceNeeded(st.Evidence))
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
		m.S.Limits.LastConfidence = *r.Confidence
		m.S.Limits.HasConfidence = true
	}
	m.addTasks(c.Declared, st.Slug)
	summary := strings.TrimSpace(r.Text)
	if summary == "" {
		summary = "reported done by @" + c.Author
	}
	m.Done(summary, c.URL, len(c.Declared))
}

// addTasks appends declared epics/tasks, numbered after the existing ones.
func (m *inputs) addTasks(ts []state.Task, step string) {
	if len(ts) == 0 {
		return
	}
	for _, t := range ts {
		t.ID = fmt.Sprintf("%02d", len(m.S.Tasks)+1)
		t.Step = step
		t.Sync = state.SyncPending
		if m.S.TrackerOff != "" {
			t.Sync = state.SyncLocal
		}
		if t.IdemKey == "" {
			t.IdemKey = IdemKey(m.S.Repo, m.S.Issue, t.ID, m.S.Cycle)
		}
		m.S.Tasks = append(m.S.Tasks, t)
	}
	if i := m.S.Step - 1; i >= 0 {
		m.S.Steps[i].Note = fmt.Sprintf("%d %s", len(ts), prose.Plural(len(ts), prose.KindWord(ts[0].Kind)))
		m.S.Steps[i].Declared = true
	}
	if m.S.TrackerEnabled != nil && *m.S.TrackerEnabled {
		m.Ask(events.Query{Kind: events.QTrackerSync})
	}
}

// IdemKey is the idempotency key of a task: stable across runs (so a
// rebuilt state finds the same Jira issues), stored on the Jira issue as a label.
func IdemKey(repo string, issue int, id string, cycle int) string {
	return idem.Key(repo, issue, fmt.Sprintf("c%d/%s", cycle, id))
}

// dispatched records the run id of a dispatch (or its failure).
func (m *inputs) dispatched(e events.Dispatched) {
	// The dispatch was answered: its outbox entry is settled.
	for i, o := range m.S.Outbox {
		if o.Kind == state.EffDispatch && o.Marker == e.Session {
			m.S.Outbox = append(m.S.Outbox[:i:i], m.S.Outbox[i+1:]...)
			m.Changed = true
			break
		}
	}
	if m.S.Exec == nil || m.S.Exec.Session != e.Session {
		return
	}
	if e.Err != "" {
		m.S.Limits.FailedWaves++
		m.Fail("dispatch failed: " + e.Err)
		return
	}
	if m.S.Exec.RunID != e.RunID {
		m.S.Exec.RunID = e.RunID
		m.Changed = true
	}
}

// runCompleted completes or fails the dispatched step with the run that
// MatchRun accepts; any other run changes nothing.
func (m *inputs) runCompleted(e events.RunCompleted) {
	if ok, _ := MatchRun(m.Set, m.S, e); !ok {
		return
	}
	ex := m.S.Exec
	ex.RunID = e.RunID
	m.Changed = true
	if e.Conclusion == "success" {
		m.Complete("workflow run succeeded: " + e.URL)
		return
	}
	m.S.Limits.FailedWaves++
	why := fmt.Sprintf("workflow run %d (session %s) concluded %s", e.RunID, ex.Session, e.Conclusion)
	if e.URL != "" {
		why += " — " + e.URL
	}
	m.Fail(why)
}

// MatchRun is the run rule (evidence.RunRule.Match): only the recorded
// run id, or the session token under the strict checks, completes the
// dispatched step of s.
func MatchRun(set machine.Settings, s *state.State, e events.RunCompleted) (bool, string) {
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
func TokenRunTrusted(set machine.Settings, slug string, ex *state.Execution, path, event, headRepo string, created time.Time) (bool, string) {
	return runRule(set, slug).TokenTrusted(ex, evidence.Run{Path: path, Event: event, HeadRepo: headRepo, CreatedAt: created})
}

func runRule(set machine.Settings, slug string) evidence.RunRule {
	if set.Config == nil { // no configuration: no workflow a token run could match
		return evidence.RunRule{Repo: set.Repo}
	}
	return evidence.RunRule{Workflow: set.Config.ExecutorFor(slug).Workflow, Repo: set.Repo}
}

// prLinked records a PR that links this issue (opened, or edited to link
// it) and, while the current step waits for evidence, reads its reviews or
// checks. A PR already linked is read again: a push (synchronize) or an
// edit may have changed what its head's checks say.
func (m *inputs) prLinked(e events.PRLinked) {
	m.linkVouch(e.PR, e.Edit)
	if !slices.Contains(m.S.LinkedPRs, e.PR) {
		m.S.LinkedPRs = append(m.S.LinkedPRs, e.PR)
		m.Changed = true
	}
	if m.AwaitingEvidence() {
		m.Ask(events.Query{Kind: events.QCheckPR, PR: e.PR})
	}
}
